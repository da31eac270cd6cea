// purpose: store target-model vectors of a re-embedding in the second vector property and take
//          the nodes off its queue
// params:  $namespace (string), $rows (list<{id, vector: list<float>}>), $shadow (string): the
//          re-embedding's vector property
// mode:    write
UNWIND $rows AS row
MATCH (n:Record {namespace: $namespace, id: row.id})
CALL db.create.setNodeVectorProperty(n, $shadow, row.vector)
REMOVE n.reembed_pending
RETURN count(n) AS written
