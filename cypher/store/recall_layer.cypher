// purpose: one recall layer in one read: the vector top-k (the namespace's HNSW candidates,
//          found as this server's line can, see {ann}, or an exact scan of the namespace when
//          $ann is 0) and after it the $pool next vector hits (id and cosine only, for a
//          feedback pass to rank again), the BM25 top-k, the (node, entity) pairs of nodes
//          mentioning the graph walk's entities ring by ring, cosines for the graph hits the
//          vector search did not find (the $rescore with most evidence), and the records of
//          the candidates with the cosines not read yet (and to $rest, the question without the
//          names it matched, for the graph's hits, when given). The store ranks in Python with
//          graphmem.store.layers, as the embedded store does; Neo4j's cosine is (1 + cos) / 2,
//          the store converts it back
// params:  $namespace (string), $kind (string), $statuses (list<string>), $vector (list<float>),
//          $ann (int): HNSW candidates asked, 0 for an exact scan, $vector_k (int), $pool (int),
//          $query (string|null: Lucene syntax built by the store from escaped terms and scope
//          tokens), $keyword_k (int), $keyword_pool (int >= $keyword_k: Lucene's hits read, whose
//          ties go oldest first, then by id, as in keyword_search.cypher),
//          $rings (list<list<string>>): entity ids, nearest ring first, $weights (map: entity
//          id -> graph evidence), $pair_limit (int), $rescore (int), $graph_k (int),
//          $rest (list<float>|null);
//          {label}: the kind's label, {index}: its vector index, {vector}: the live vector
//          property, {ann}: the part that asks the index for this namespace's candidates on this
//          server's line (cypher/parts/)
// mode:    read
{ann}
CALL () {
  UNWIND CASE WHEN $ann = 0 THEN [1] ELSE [] END AS go
  MATCH (n:{label})
  USING INDEX n:{label}(namespace, id)
  WHERE n.namespace = $namespace AND n.id IS NOT NULL AND coalesce(n.status, 'active') IN $statuses AND n.{vector} IS NOT NULL
  WITH n, vector.similarity.cosine(n.{vector}, $vector) AS score
  ORDER BY score DESC, n.id
  LIMIT $vector_k + $pool
  RETURN collect([n.id, score]) AS exact
}
WITH seen, size(approximate) AS own, approximate + exact AS scored
CALL (scored) {
  UNWIND scored AS hit
  WITH hit ORDER BY hit[1] DESC, hit[0] LIMIT $vector_k + $pool
  RETURN collect(hit) AS ranked
}
WITH seen, own, ranked[..$vector_k] AS top, ranked[$vector_k..] AS pool
CALL () {
  UNWIND CASE WHEN $query IS NULL THEN [] ELSE [1] END AS go
  CALL db.index.fulltext.queryNodes('record_terms', $query, {limit: $keyword_pool}) YIELD node, score
  WITH node, score WHERE node.namespace = $namespace
  WITH node, score ORDER BY score DESC, node.created_at, node.id LIMIT $keyword_k
  RETURN collect([node.id, score]) AS keyword
}
CALL () {
  // ring by ring, entity by entity: the LIMIT stops the reading once it has its pairs, so a
  // ring after a hub that filled them is never expanded (each ring read whole cost 3.7 ms of
  // 48.9 at 100k memories)
  UNWIND range(0, size($rings) - 1) AS ring
  UNWIND $rings[ring] AS entity
  MATCH (e:Entity {namespace: $namespace, id: entity})<-[:MENTIONS]-(n:{label})
  WHERE coalesce(n.status, 'active') IN $statuses
  WITH n, e LIMIT $pair_limit
  RETURN collect([n.id, e.id]) AS pairs
}
CALL (pairs, top) {
  WITH pairs, [hit IN top | hit[0]] AS known
  UNWIND pairs AS pair
  WITH pair[0] AS id, known, max($weights[pair[1]]) AS evidence
  WHERE evidence > 0 AND NOT id IN known
  WITH id, evidence ORDER BY evidence DESC, id LIMIT $rescore
  MATCH (n:Record {namespace: $namespace, id: id})
  WHERE n.{vector} IS NOT NULL
  RETURN collect([id, evidence, vector.similarity.cosine(n.{vector}, $vector)]) AS rescored
}
CALL (rescored) {
  UNWIND rescored AS hit
  WITH hit ORDER BY hit[1] + 2 * hit[2] DESC, hit[0] LIMIT $graph_k
  RETURN collect(hit[0]) AS best
}
WITH seen, own, top, pool, keyword, pairs, rescored, best,
     [hit IN top + pool + rescored | hit[0]] AS scored
CALL (top, keyword, best, scored, pairs) {
  // a cosine only where none was read yet (each costs the server ~20-35 us), and to $rest
  // only for the graph's hits (what recall asks it for)
  WITH [hit IN top | hit[0]] + [hit IN keyword | hit[0]] + best AS wanted, scored,
       CASE WHEN $rest IS NULL THEN [] ELSE [pair IN pairs | pair[0]] END AS graphed
  MATCH (n:Record {namespace: $namespace})
  WHERE n.id IN wanted
  WITH n, scored, graphed, n.kind = $kind AND n.{vector} IS NOT NULL AS held
  RETURN collect([n.kind, n.data, n.access_count, toString(n.last_accessed_at), n.id, [n.retiring, n.retire_data]]) AS rows,
         collect(CASE WHEN held AND NOT n.id IN scored
                 THEN [n.id, vector.similarity.cosine(n.{vector}, $vector)] END) AS sims,
         collect(CASE WHEN held AND n.id IN graphed
                 THEN [n.id, vector.similarity.cosine(n.{vector}, $rest)] END) AS rest
}
RETURN seen, own, top, pool, keyword, pairs, rescored, rows, sims, rest
