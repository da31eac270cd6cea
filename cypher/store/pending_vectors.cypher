// purpose: nodes of one kind stored without a vector yet, oldest first, in any namespace
//          (maintenance: the enricher's queue)
// params:  $kind (string), $limit (int)
// mode:    read
MATCH (n:Record)
WHERE n.vector_pending = true AND n.kind = $kind
RETURN n.kind AS kind, n.data AS data, n.access_count AS access_count,
       n.last_accessed_at AS last_accessed_at, n.id AS id, n.namespace AS namespace
ORDER BY n.created_at, n.id
LIMIT $limit
