// purpose: the first half of a conditional write's check: take the write lock of the given
//          nodes for the rest of the transaction, so a concurrent writer of them waits for the
//          commit (then nodes_updated_at reads what is current). An id the write will create
//          ($create) is merged as a bare node first: a second writer creating the same node
//          then waits on it and finds it written, instead of both finding it absent
// params:  $namespace (string), $ids (list<string>), $create (list<string>): a subset of $ids
// mode:    write
UNWIND $ids AS id
CALL (id) {
  WITH id WHERE id IN $create
  MERGE (n:Record {namespace: $namespace, id: id})
  SET n.write_lock = true
  REMOVE n.write_lock
}
CALL (id) {
  WITH id WHERE NOT id IN $create
  MATCH (n:Record {namespace: $namespace, id: id})
  SET n.write_lock = true
  REMOVE n.write_lock
}
RETURN count(*) AS locked
