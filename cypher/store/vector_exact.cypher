// purpose: exact cosine top-k within one namespace, kind and statuses (a scan of the namespace's
//          nodes of that kind); Neo4j's cosine is (1 + cos) / 2, the store converts it back
// params:  $namespace (string), $statuses (list<string>), $vector (list<float>), $k (int),
//          $prop (string): the live vector property;
//          {label}: the kind's label
// mode:    read
MATCH (n:{label})
WHERE n.namespace = $namespace AND coalesce(n.status, 'active') IN $statuses AND n[$prop] IS NOT NULL
WITH n, vector.similarity.cosine(n[$prop], $vector) AS score
ORDER BY score DESC, n.id
LIMIT $k
RETURN collect([n.id, score]) AS rows
