// purpose: one recall layer in one read: the vector top-k (the namespace's HNSW candidates,
//          found as this server's line can, see {ann}, or an exact scan of the namespace when
//          $ann is 0) and after it the $pool next vector hits (id and cosine only, for a
//          feedback pass to rank again), the BM25 top-k, the (node, entity) pairs of nodes
//          mentioning the graph walk's entities ring by ring, cosines for the graph hits the
//          vector search did not find (the $rescore with most evidence), and the records of
//          the candidates with their cosines. The store ranks in Python with
//          graphmem.store.layers, as the embedded store does; Neo4j's cosine is (1 + cos) / 2,
//          the store converts it back
// params:  $namespace (string), $kind (string), $statuses (list<string>), $vector (list<float>),
//          $prop (string): the live vector property,
//          $ann (int): HNSW candidates asked, 0 for an exact scan, $vector_k (int), $pool (int),
//          $query (string|null: Lucene syntax built by the store from escaped terms and scope
//          tokens), $keyword_k (int), $rings (list<list<string>>): entity ids, nearest ring
//          first, $weights (map: entity id -> graph evidence), $pair_limit (int),
//          $rescore (int), $graph_k (int);
//          {label}: the kind's label, {index}: its vector index, {ann}: the part that asks the
//          index for this namespace's candidates on this server's line (cypher/parts/)
// mode:    read
{ann}
CALL () {
  UNWIND CASE WHEN $ann = 0 THEN [1] ELSE [] END AS go
  MATCH (n:{label})
  USING INDEX n:{label}(namespace, id)
  WHERE n.namespace = $namespace AND n.id IS NOT NULL AND coalesce(n.status, 'active') IN $statuses AND n[$prop] IS NOT NULL
  WITH n, vector.similarity.cosine(n[$prop], $vector) AS score
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
  CALL db.index.fulltext.queryNodes('record_terms', $query, {limit: $keyword_k}) YIELD node, score
  WITH node, score WHERE node.namespace = $namespace
  RETURN collect([node.id, score]) AS keyword
}
CALL () {
  UNWIND range(0, size($rings) - 1) AS ring
  CALL (ring) {
    MATCH (e:Entity {namespace: $namespace})<-[:MENTIONS]-(n:Record)
    WHERE e.id IN $rings[ring] AND n.kind = $kind AND coalesce(n.status, 'active') IN $statuses
    WITH n, e LIMIT $pair_limit
    RETURN collect([n.id, e.id]) AS found
  }
  WITH ring, found ORDER BY ring
  WITH collect(found) AS rings
  RETURN reduce(all = [], found IN rings | all + found)[..$pair_limit] AS pairs
}
CALL (pairs, top) {
  WITH pairs, [hit IN top | hit[0]] AS known
  UNWIND pairs AS pair
  WITH pair[0] AS id, known, max($weights[pair[1]]) AS evidence
  WHERE evidence > 0 AND NOT id IN known
  WITH id, evidence ORDER BY evidence DESC, id LIMIT $rescore
  MATCH (n:Record {namespace: $namespace, id: id})
  WHERE n[$prop] IS NOT NULL
  RETURN collect([id, evidence, vector.similarity.cosine(n[$prop], $vector)]) AS rescored
}
CALL (rescored) {
  UNWIND rescored AS hit
  WITH hit ORDER BY hit[1] + 2 * hit[2] DESC, hit[0] LIMIT $graph_k
  RETURN collect(hit[0]) AS best
}
WITH seen, own, top, pool, keyword, pairs, rescored,
     [hit IN top | hit[0]] + [hit IN keyword | hit[0]] + best AS wanted
CALL (wanted) {
  MATCH (n:Record {namespace: $namespace})
  WHERE n.id IN wanted
  RETURN collect([n.kind, n.data, n.access_count, toString(n.last_accessed_at), n.id, [n.retiring, n.retire_data]]) AS rows,
         collect(CASE WHEN n.kind = $kind AND n[$prop] IS NOT NULL
                 THEN [n.id, vector.similarity.cosine(n[$prop], $vector)] END) AS sims
}
RETURN seen, own, top, pool, keyword, pairs, rescored, rows, sims
