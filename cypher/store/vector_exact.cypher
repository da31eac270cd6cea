// purpose: exact cosine top-k within one namespace, kind and statuses (a scan of the namespace's
//          nodes of that kind, through the (namespace, id) constraint's index: a plan cached while the
//          label was small scanned every node of it, 1.2 s for 1,500 of 100k); Neo4j's cosine is
//          (1 + cos) / 2, the store converts it back
// params:  $namespace (string), $statuses (list<string>), $vector (list<float>), $k (int),
//          {label}: the kind's label, {vector}: the live vector property
// mode:    read
MATCH (n:{label})
USING INDEX n:{label}(namespace, id)
WHERE n.namespace = $namespace AND n.id IS NOT NULL AND coalesce(n.status, 'active') IN $statuses AND n.{vector} IS NOT NULL
WITH n, vector.similarity.cosine(n.{vector}, $vector) AS score
ORDER BY score DESC, n.id
LIMIT $k
RETURN collect([n.id, score]) AS rows
