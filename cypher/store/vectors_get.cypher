// purpose: stored embeddings by node id
// params:  $namespace (string), $ids (list<string>), $prop (string): the live vector property
// mode:    read
MATCH (n:Record {namespace: $namespace})
WHERE n.id IN $ids AND n[$prop] IS NOT NULL
RETURN n.id AS id, n[$prop] AS embedding
