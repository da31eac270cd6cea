// purpose: graphmem's vector indexes with their dimensions and properties (init compares them
//          with settings and with the form this server's line wants)
// params:  none
// mode:    read
SHOW VECTOR INDEXES YIELD name, labelsOrTypes, properties, options
WHERE name IN [kind IN ['memory', 'message', 'episode', 'procedure', 'entity', 'step', 'trace'] | kind + '_embedding']
   OR name IN [kind IN ['memory', 'message', 'episode', 'procedure', 'entity', 'step', 'trace'] | kind + '_embedding_b']
RETURN name, labelsOrTypes[0] AS label, options.indexConfig.`vector.dimensions` AS dim, properties
