// purpose: nodes by id (any kind) with the cosine of a query vector to each of one kind that has
//          one: recall fetches its candidates and rescores those it has no cosine for in one read
// params:  $namespace (string), $ids (list<string>), $kind (string), $vector (list<float>);
//          {vector}: the live vector property
// mode:    read
MATCH (n:Record {namespace: $namespace})
WHERE n.id IN $ids
RETURN collect([n.kind, n.data, n.access_count, toString(n.last_accessed_at), n.id, [n.retiring, n.retire_data]]) AS rows,
       collect(CASE WHEN n.kind = $kind AND n.{vector} IS NOT NULL
               THEN [n.id, vector.similarity.cosine(n.{vector}, $vector)] END) AS sims
