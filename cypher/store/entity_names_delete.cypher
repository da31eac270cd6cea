// purpose: delete the name entries of entities that are being deleted
// params:  $namespace (string), $ids (list<string>): entity ids
// mode:    write
MATCH (x:EntityName {namespace: $namespace})
WHERE x.entity_id IN $ids
DELETE x
