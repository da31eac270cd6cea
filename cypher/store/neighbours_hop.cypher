// purpose: one hop of RELATES_TO traversal, either direction, from a frontier of entities
// params:  $namespace (string), $ids (list<string>)
// mode:    read
UNWIND $ids AS id
MATCH (a:Entity {namespace: $namespace, id: id})
CALL (a) {
  MATCH (a)-[:RELATES_TO]->(b:Entity) RETURN b, 0 AS way
  UNION
  MATCH (a)<-[:RELATES_TO]-(b:Entity) RETURN b, 1 AS way
}
RETURN a.id AS source, b.id AS target, way
