// purpose: nodes queued for the re-embedding (no vector of the target model yet), oldest first,
//          in any namespace
// params:  $limit (int)
// mode:    read
MATCH (n:Record)
WHERE n.reembed_pending = true
WITH n
ORDER BY n.created_at, n.id
LIMIT $limit
RETURN collect([n.kind, n.data, n.access_count, toString(n.last_accessed_at), n.id, null, n.namespace]) AS rows
