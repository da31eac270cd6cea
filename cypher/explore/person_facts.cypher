// purpose: a person's facts (memories that mention them), newest first, with what superseded
//          each one and why: the SUPERSEDES chain instead of silent overwrites
// params:  $namespace (string), $name (string): the person's name or an alias, any case
// mode:    read
MATCH (p:Entity {namespace: $namespace})
WHERE toLower(p.name) = toLower($name) OR toLower($name) IN [a IN p.aliases | toLower(a)]
MATCH (m:Memory {namespace: $namespace})-[:MENTIONS]->(p)
OPTIONAL MATCH (newer:Memory {namespace: $namespace})-[s:SUPERSEDES]->(m)
RETURN m.id AS memory, m.status AS status, m.text AS fact, m.valid_at AS valid_from, m.invalid_at AS valid_until,
       newer.text AS superseded_by, s.reason AS reason
ORDER BY m.created_at DESC
LIMIT 100
