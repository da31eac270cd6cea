// purpose: edges leaving the given nodes, optionally of some types
// params:  $namespace (string), $ids (list<string>), $types (list<string>|null)
// mode:    read
MATCH (a:Record {namespace: $namespace})-[r]->(b:Record)
WHERE a.id IN $ids AND ($types IS NULL OR type(r) IN $types)
RETURN a.id AS source, type(r) AS type, b.id AS target, r.key AS key, r.props AS props, toString(r.created_at) AS created_at
