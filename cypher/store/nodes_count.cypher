// purpose: node counts of a namespace by kind and status
// params:  $namespace (string)
// mode:    read
MATCH (n:Record {namespace: $namespace})
RETURN n.kind AS kind, n.status AS status, count(*) AS n
