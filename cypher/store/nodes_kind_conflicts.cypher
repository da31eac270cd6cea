// purpose: ids of a batch already used by a node of another kind (a write would otherwise give
//          one node two kind labels)
// params:  $namespace (string), $ids (list<string>), $kind (string)
// mode:    read
MATCH (n:Record {namespace: $namespace})
WHERE n.id IN $ids AND n.kind <> $kind
RETURN n.id AS id, n.kind AS kind
LIMIT 1
