// purpose: edge endpoints that do not exist in the namespace
// params:  $namespace (string), $ids (list<string>)
// mode:    read
UNWIND $ids AS id
OPTIONAL MATCH (n:Record {namespace: $namespace, id: id})
WITH id, n WHERE n IS NULL
RETURN id
LIMIT 1
