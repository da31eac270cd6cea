// purpose: BM25 top-k from the full-text index; the query string is built by the store from
//          quoted, escaped terms and the namespace's scope tokens, so the filter runs inside Lucene.
//          Lucene returns tied scores in its own document order, which an update of a node
//          changes from run to run; ties go oldest first (then by id), as the embedded store
//          orders them, from a pool of k + 16 so the cut at k is not Lucene's
// params:  $query (string: Lucene syntax, built only from escaped terms), $k (int), $pool (int >= k),
//          $namespace (string)
// mode:    read
CALL db.index.fulltext.queryNodes('record_terms', $query, {limit: $pool}) YIELD node, score
WHERE node.namespace = $namespace
WITH node, score ORDER BY score DESC, node.created_at, node.id LIMIT $k
RETURN collect([node.id, score]) AS rows
