// purpose: stored embeddings by node id
// params:  $namespace (string), $ids (list<string>); {vector}: the live vector property
// mode:    read
MATCH (n:Record {namespace: $namespace})
WHERE n.id IN $ids AND n.{vector} IS NOT NULL
RETURN n.id AS id, n.{vector} AS embedding
