// purpose: the turns one NEXT edge before or after the given ones, less those excluded, with
//          the cosine of a query vector to each (recall's conversation context in one read)
// params:  $namespace (string), $ids (list<string>), $exclude (list<string>), $vector (list<float>);
//          {vector}: the live vector property
// mode:    read
MATCH (m:Record {namespace: $namespace})-[:NEXT]-(n:Message)
WHERE m.id IN $ids AND NOT n.id IN $exclude
WITH DISTINCT n
RETURN collect([n.kind, n.data, n.access_count, toString(n.last_accessed_at), n.id, [n.retiring, n.retire_data]]) AS rows,
       collect(CASE WHEN n.{vector} IS NOT NULL THEN [n.id, vector.similarity.cosine(n.{vector}, $vector)] END) AS sims
