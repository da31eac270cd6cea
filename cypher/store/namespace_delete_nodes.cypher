// purpose: delete one batch of a namespace's nodes with what relationships are left (called until it
//          returns 0, so one transaction never holds a whole large namespace)
// params:  $namespace (string), $batch (int)
// mode:    write
MATCH (n:Record {namespace: $namespace})
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
