// purpose: nodes by id (any kind)
// params:  $namespace (string), $ids (list<string>)
// mode:    read
MATCH (n:Record {namespace: $namespace})
WHERE n.id IN $ids
RETURN collect([n.kind, n.data, n.access_count, toString(n.last_accessed_at), n.id, [n.retiring, n.retire_data]]) AS rows
