// purpose: the first half of a conditional write's check: take the write lock of the given
//          nodes for the rest of the transaction, so a concurrent writer of them waits for the
//          commit (then nodes_updated_at reads what is current)
// params:  $namespace (string), $ids (list<string>)
// mode:    write
MATCH (n:Record {namespace: $namespace})
WHERE n.id IN $ids
SET n.write_lock = true
REMOVE n.write_lock
RETURN count(n) AS locked
