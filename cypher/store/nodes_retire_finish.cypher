// purpose: the second step of a two-step retirement, run after the first has committed (its
//          successors are then in every index): the retired record replaces the old one. The
//          marks `retiring` and `retire_data` stay (a reader then never sees the old record
//          without them); the next nodes_put of the node removes them
// params:  $namespace (string), $rows (list<{id, props: map, times: map}>): as nodes_put's
// mode:    write
UNWIND $rows AS row
MATCH (n:Record {namespace: $namespace, id: row.id})
WHERE n.retire_pending = true
SET n += row.props
FOREACH (k IN keys(row.times) | SET n[k] = datetime({epochSeconds: row.times[k][0], nanosecond: row.times[k][1]}))
REMOVE n.retire_pending
RETURN count(n) AS finished
