// purpose: the second half of a conditional write's check (after nodes_lock, in the same
//          transaction): the current updated_at of the given nodes; a missing id is left out
// params:  $namespace (string), $ids (list<string>)
// mode:    read
MATCH (n:Record {namespace: $namespace})
WHERE n.id IN $ids
RETURN n.id AS id, n.updated_at AS at
