// purpose: nodes of one kind stored without a vector yet, oldest first, in any namespace
//          (maintenance: the enricher's queue)
// params:  $kind (string), $limit (int)
// mode:    read
MATCH (n:Record)
WHERE n.vector_pending = true AND n.kind = $kind
WITH n
ORDER BY n.created_at, n.id
LIMIT $limit
RETURN collect([n.kind, n.data, n.access_count, toString(n.last_accessed_at), n.id, null, n.namespace]) AS rows
