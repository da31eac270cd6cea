// purpose: an entity's neighbourhood: relations in both directions, the fact behind each and
//          how many memories mention the other end
// params:  $namespace (string), $name (string): the entity's name or an alias, any case
// mode:    read
MATCH (e:Entity {namespace: $namespace})
WHERE toLower(e.name) = toLower($name) OR toLower($name) IN [a IN e.aliases | toLower(a)]
MATCH (e)-[r:RELATES_TO]-(other:Entity {namespace: $namespace})
OPTIONAL MATCH (fact:Memory {namespace: $namespace, id: r.memory_id})
RETURN e.name AS entity,
       CASE WHEN startNode(r) = e THEN r.predicate + ' ->' ELSE '<- ' + r.predicate END AS relation,
       other.name AS other, other.type AS type, fact.text AS fact, r.invalid_at AS ended,
       COUNT { (:Memory {namespace: $namespace})-[:MENTIONS]->(other) } AS mentions
ORDER BY ended IS NOT NULL, mentions DESC
LIMIT 100
