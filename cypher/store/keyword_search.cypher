// purpose: BM25 top-k from the full-text index; the query string is built by the store from
//          quoted, escaped terms and the namespace's scope tokens, so the filter runs inside Lucene
// params:  $query (string: Lucene syntax, built only from escaped terms), $k (int), $namespace (string)
// mode:    read
CALL db.index.fulltext.queryNodes('record_terms', $query, {limit: $k}) YIELD node, score
WHERE node.namespace = $namespace
RETURN collect([node.id, score]) AS rows
