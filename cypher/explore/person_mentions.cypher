// purpose: where a person appears in the log: the turns they said and the turns that mention
//          them (by name or alias, linked by the dictionary match), newest first, with the session
// params:  $namespace (string), $name (string): the person's name or an alias, any case
// mode:    read
MATCH (p:Entity {namespace: $namespace})
WHERE toLower(p.name) = toLower($name) OR toLower($name) IN [a IN p.aliases | toLower(a)]
MATCH (p)-[r:SAID|MENTIONS]-(m:Message {namespace: $namespace})
RETURN CASE type(r) WHEN 'SAID' THEN 'said' ELSE 'mentioned' END AS how, m.session_id AS session, m.seq AS seq,
       m.created_at AS at, m.speaker AS speaker, m.content AS message
ORDER BY at DESC, seq DESC
LIMIT 200
