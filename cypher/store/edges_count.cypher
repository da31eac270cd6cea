// purpose: relationship count of a namespace
// params:  $namespace (string)
// mode:    read
MATCH (:Record {namespace: $namespace})-[r]->(:Record)
RETURN count(r) AS n
