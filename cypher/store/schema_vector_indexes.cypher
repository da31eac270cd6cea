// purpose: graphmem's vector indexes with their dimensions (init compares them with settings)
// params:  none
// mode:    read
SHOW VECTOR INDEXES YIELD name, labelsOrTypes, options
WHERE name IN [kind IN ['memory', 'message', 'episode', 'procedure', 'entity', 'step', 'trace'] | kind + '_embedding']
   OR name IN [kind IN ['memory', 'message', 'episode', 'procedure', 'entity', 'step', 'trace'] | kind + '_embedding_b']
RETURN name, labelsOrTypes[0] AS label, options.indexConfig.`vector.dimensions` AS dim
