// purpose: insert or replace a batch of nodes of one kind; a row without a vector keeps the
//          node's stored vector, and a node with none is marked vector_pending for enrichment
// params:  $namespace (string), $rows (list<{id, props: map, vector: list<float>|null}>)
//          {label}: the kind's label, one of Memory Message Episode Procedure Entity Session
// mode:    write
UNWIND $rows AS row
MERGE (n:Record {namespace: $namespace, id: row.id})
SET n:{label}
SET n += row.props
WITH n, row
CALL (n, row) {
  WITH n, row WHERE row.vector IS NOT NULL
  CALL db.create.setNodeVectorProperty(n, 'embedding', row.vector)
}
SET n.vector_pending = CASE WHEN n.embedding IS NULL THEN true ELSE null END
RETURN count(*) AS written
