// purpose: the labels the keyword index covers (init drops and rebuilds it when an older graphmem
//          created it for fewer labels than 03_fulltext_indexes names)
// params:  none
// mode:    read
SHOW FULLTEXT INDEXES YIELD name, labelsOrTypes
WHERE name = 'record_terms'
RETURN labelsOrTypes AS labels
