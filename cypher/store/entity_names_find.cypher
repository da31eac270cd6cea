// purpose: entities by normalised name or alias
// params:  $namespace (string), $norms (list<string>)
// mode:    read
MATCH (x:EntityName {namespace: $namespace})
WHERE x.norm IN $norms
RETURN x.norm AS norm, x.entity_id AS entity_id
ORDER BY norm, entity_id
