// purpose: procedures one of whose steps names an entity (a tool, a service, a person), with
//          the steps that name it
// params:  $namespace (string), $name (string): the entity's name or an alias, any case
// mode:    read
MATCH (e:Entity {namespace: $namespace})
WHERE toLower(e.name) = toLower($name) OR toLower($name) IN [a IN e.aliases | toLower(a)]
MATCH (p:Procedure {namespace: $namespace})-[:HAS_STEP]->(s:Step)-[:MENTIONS]->(e)
RETURN p.id AS procedure, p.task AS task, p.status AS status,
       collect(toString(s.order) + '. ' + s.text) AS steps_naming_it
ORDER BY status, task
LIMIT 50
