// purpose: a namespace's vector candidates on Neo4j 5 (the `global` part of {ann}): the shared
//          HNSW index's top $ann of all tenants, then only this namespace's nodes of the asked
//          statuses, rescored exactly. `seen` (how many the index gave) tells the store whether
//          the index ran out, so it can tell a true shortfall from a filtered one. Asks nothing
//          when $ann is 0 (an exact scan instead)
// params:  $ann (int): candidates asked, $vector (list<float>), $namespace (string),
//          $statuses (list<string>); {index}: the kind's vector index over {vector}, the live
//          vector property
// mode:    part (yields seen, approximate: [[id, Neo4j cosine]])
CALL () {
  UNWIND CASE WHEN $ann > 0 THEN [1] ELSE [] END AS go
  CALL db.index.vector.queryNodes('{index}', $ann, $vector) YIELD node
  WITH collect(node) AS hits
  RETURN size(hits) AS seen,
         [n IN hits WHERE n.namespace = $namespace AND coalesce(n.status, 'active') IN $statuses
          | [n.id, vector.similarity.cosine(n.{vector}, $vector)]] AS approximate
}
