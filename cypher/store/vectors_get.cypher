// purpose: stored embeddings by node id
// params:  $namespace (string), $ids (list<string>)
// mode:    read
MATCH (n:Record {namespace: $namespace})
WHERE n.id IN $ids AND n.embedding IS NOT NULL
RETURN n.id AS id, n.embedding AS embedding
