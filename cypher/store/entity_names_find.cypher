// purpose: entities by normalised name or alias
// params:  $namespace (string), $norms (list<string>)
// mode:    read
MATCH (x:EntityName {namespace: $namespace})
WHERE x.norm IN $norms
WITH x
ORDER BY x.norm, x.entity_id
RETURN collect([x.norm, x.entity_id]) AS rows
