// purpose: delete a namespace's entity-name entries, metadata and registration (after its nodes)
// params:  $namespace (string)
// mode:    write
OPTIONAL MATCH (x:EntityName {namespace: $namespace})
DELETE x
WITH count(*) AS names
OPTIONAL MATCH (m:GraphMemMeta {namespace: $namespace})
DELETE m
WITH count(*) AS metas
OPTIONAL MATCH (ns:GraphMemNamespace {name: $namespace})
DELETE ns
