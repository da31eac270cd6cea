// purpose: a namespace's vector candidates on Neo4j 2026.x (the `filtered` part of {ann}): the
//          index holds each node's namespace as a filter property, so the HNSW search itself
//          walks only this namespace's nodes (Cypher 25 SEARCH ... WHERE) and its top $ann are
//          all the tenant's; the statuses are filtered after (a node of another kind holds none,
//          so they cannot be a filter property). The score is the exact cosine of the stored
//          vector. `seen` (how many the index gave) tells the store whether the namespace ran out.
//          Asks nothing when $ann is 0 (an exact scan instead)
// params:  $ann (int): candidates asked, $vector (list<float>), $namespace (string),
//          $statuses (list<string>); {label}: the kind's label, {index}: its vector index
// mode:    part (yields seen, approximate: [[id, Neo4j cosine]])
CYPHER 25
CALL () {
  UNWIND CASE WHEN $ann > 0 THEN [1] ELSE [] END AS go
  MATCH (n:{label})
  SEARCH n IN (VECTOR INDEX {index} FOR $vector WHERE n.namespace = $namespace LIMIT $ann) SCORE AS score
  WITH collect([n, score]) AS hits
  RETURN size(hits) AS seen,
         [hit IN hits WHERE coalesce(hit[0].status, 'active') IN $statuses | [hit[0].id, hit[1]]] AS approximate
}
