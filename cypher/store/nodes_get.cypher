// purpose: nodes by id (any kind)
// params:  $namespace (string), $ids (list<string>)
// mode:    read
MATCH (n:Record {namespace: $namespace})
WHERE n.id IN $ids
RETURN n.kind AS kind, n.data AS data, n.access_count AS access_count,
       n.last_accessed_at AS last_accessed_at, n.id AS id
