// purpose: graphmem's vector indexes with their dimensions (init compares them with settings)
// params:  none
// mode:    read
SHOW VECTOR INDEXES YIELD name, labelsOrTypes, options
WHERE name IN ['memory_embedding', 'message_embedding', 'episode_embedding', 'procedure_embedding', 'entity_embedding']
RETURN name, labelsOrTypes[0] AS label, options.indexConfig.`vector.dimensions` AS dim
