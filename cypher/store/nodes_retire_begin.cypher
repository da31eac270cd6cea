// purpose: the first step of a two-step retirement on Neo4j (see Neo4jStore.put). Neo4j applies a
//          commit to the store before its index updates, so a reader could see an old version
//          retired while its successor is not yet in the indexes: no current version at all. The
//          old node keeps its record and status here; it is marked with its successors' ids and
//          its retired record (which readers use when they see a successor beside it), and its
//          updated_at moves on so a conditional writer of the old version fails its check. Only
//          active nodes are marked; the ids marked are returned
// params:  $namespace (string), $rows (list<{id, kind, successors: list<string>, data: string,
//          updated_at: datetime}>)
// mode:    write
UNWIND $rows AS row
MATCH (n:Record {namespace: $namespace, id: row.id})
WHERE n.status = 'active' AND n.kind = row.kind
SET n.retiring = row.successors, n.retire_data = row.data, n.retire_pending = true, n.updated_at = row.updated_at
RETURN collect(n.id) AS marked
