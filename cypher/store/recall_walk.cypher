// purpose: recall's graph walk in one read: the entities the query names (the oldest of each
//          normalised name or alias), then up to $depth rings of RELATES_TO neighbours (either
//          direction, nearest first, at most $limit entities in all; rejected entities start
//          no walk), which name found which entity ($norms as matched: the caller keeps the
//          longest names and asks again when a shorter one was inside a longer), the relations
//          from the named entities to the first ring that still hold (they name and score the
//          first hop), and how many nodes mention each named entity or were said by it (as
//          mention_counts.cypher)
// params:  $namespace (string), $norms (list<string>): normalised names, $depth (int, 0-3),
//          $limit (int)
// mode:    read
CALL () {
  MATCH (x:EntityName {namespace: $namespace})
  WHERE x.norm IN $norms
  MATCH (n:Record {namespace: $namespace, id: x.entity_id})
  WITH x.norm AS norm, x.entity_id AS id, n ORDER BY id
  WITH norm, collect(n)[0] AS n
  RETURN collect(DISTINCT n) AS named, collect([norm, n.id]) AS hits
}
WITH named, hits, [n IN named WHERE coalesce(n.feedback, '') <> 'rejected'] AS seeds
CALL (seeds) {
  UNWIND CASE WHEN $depth >= 1 AND $limit > size(seeds) THEN seeds ELSE [] END AS a
  MATCH (a)-[:RELATES_TO]-(b:Entity)
  WHERE NOT b IN seeds
  WITH DISTINCT b LIMIT $limit
  RETURN collect(b) AS found
}
WITH named, hits, seeds, found[..CASE WHEN $limit > size(seeds) THEN $limit - size(seeds) ELSE 0 END] AS ring1
CALL (seeds, ring1) {
  UNWIND CASE WHEN $depth >= 2 AND $limit > size(seeds) + size(ring1) THEN ring1 ELSE [] END AS a
  MATCH (a)-[:RELATES_TO]-(b:Entity)
  WHERE NOT b IN seeds AND NOT b IN ring1
  WITH DISTINCT b LIMIT $limit
  RETURN collect(b) AS found
}
WITH named, hits, seeds, ring1, size(seeds) + size(ring1) AS held, found
WITH named, hits, seeds, ring1, found[..CASE WHEN $limit > held THEN $limit - held ELSE 0 END] AS ring2
CALL (seeds, ring1, ring2) {
  UNWIND CASE WHEN $depth >= 3 AND $limit > size(seeds) + size(ring1) + size(ring2) THEN ring2 ELSE [] END AS a
  MATCH (a)-[:RELATES_TO]-(b:Entity)
  WHERE NOT b IN seeds AND NOT b IN ring1 AND NOT b IN ring2
  WITH DISTINCT b LIMIT $limit
  RETURN collect(b) AS found
}
WITH named, hits, seeds, ring1, ring2, size(seeds) + size(ring1) + size(ring2) AS held, found
WITH named, hits, seeds, ring1, ring2, found[..CASE WHEN $limit > held THEN $limit - held ELSE 0 END] AS ring3
CALL (seeds, ring1) {
  UNWIND seeds AS a
  MATCH (a)-[r:RELATES_TO]-(b:Entity)
  WHERE b IN ring1 AND r.invalid_at IS NULL
  WITH a, r, b ORDER BY r.created_at
  RETURN collect([b.id, a.id, r.predicate, r.key, startNode(r) = a]) AS first
}
RETURN [n IN named | [n.kind, n.data, n.access_count, toString(n.last_accessed_at), n.id, [n.retiring, n.retire_data]]] AS rows, hits,
       [[n IN ring1 | n.id], [n IN ring2 | n.id], [n IN ring3 | n.id]] AS rings, first,
       [n IN seeds | [n.id, COUNT { (n)<-[:MENTIONS]-() } + COUNT { (n)-[:SAID]->() }]] AS mentions
