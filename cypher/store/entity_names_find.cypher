// purpose: entities by normalised name or alias, with the entity records themselves (one read:
//          recall's graph walk starts from them)
// params:  $namespace (string), $norms (list<string>)
// mode:    read
MATCH (x:EntityName {namespace: $namespace})
WHERE x.norm IN $norms
MATCH (n:Record {namespace: $namespace, id: x.entity_id})
WITH x, n
ORDER BY x.norm, x.entity_id
RETURN collect([x.norm, x.entity_id]) AS hits,
       collect([n.kind, n.data, n.access_count, toString(n.last_accessed_at), n.id, [n.retiring, n.retire_data]]) AS rows
