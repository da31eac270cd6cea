// purpose: insert or replace a batch of nodes of one kind; a row without a vector keeps the
//          node's stored vector, and a node with none is marked vector_pending for enrichment.
//          While a re-embedding runs, a node given a new vector (or none yet) is queued for it.
//          A write replaces the node's record whole, so it drops the marks of a two-step retirement.
// params:  $namespace (string), $rows (list<{id, props: map, times: map of [epoch seconds,
//          nanoseconds] (the datetime properties), vector: list<float>|null}>),
//          $prop (string): the live vector property, $shadow (string): the re-embedding's,
//          $reembedding (bool): a re-embedding runs and this kind carries vectors;
//          {label}: the kind's label, one of cypher.LABELS (Memory, Step, Trace, ToolCall, ...)
// mode:    write
UNWIND $rows AS row
MERGE (n:Record {namespace: $namespace, id: row.id})
SET n:{label}
SET n += row.props
FOREACH (k IN keys(row.times) | SET n[k] = datetime({epochSeconds: row.times[k][0], nanosecond: row.times[k][1]}))
REMOVE n.retiring, n.retire_data, n.retire_pending
WITH n, row
CALL (n, row) {
  WITH n, row WHERE row.vector IS NOT NULL
  CALL db.create.setNodeVectorProperty(n, $prop, row.vector)
}
SET n.vector_pending = CASE WHEN n[$prop] IS NULL THEN true ELSE null END
SET n.reembed_pending = CASE WHEN $reembedding AND (row.vector IS NOT NULL OR n[$shadow] IS NULL) THEN true
                        ELSE n.reembed_pending END
RETURN count(*) AS written
