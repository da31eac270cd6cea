// purpose: retirements whose second step never ran (the process or server stopped between the
//          two transactions), finished when a store opens
// params:  none
// mode:    read
MATCH (n:Record)
WHERE n.retire_pending = true
RETURN collect([n.kind, n.retire_data, n.access_count, toString(n.last_accessed_at), n.id, null, n.namespace]) AS rows
