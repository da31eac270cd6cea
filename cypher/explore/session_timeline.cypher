// purpose: a session's timeline: its turns in order along the NEXT chain, who said each, the
//          entities each mentions and, for a turn stating a value later replaced, the memory
//          that replaced it
// params:  $namespace (string), $session_id (string)
// mode:    read
MATCH (s:Session {namespace: $namespace, id: $session_id})-[:HAS_MESSAGE]->(m:Message)
OPTIONAL MATCH (speaker:Entity {namespace: $namespace})-[:SAID]->(m)
OPTIONAL MATCH (m)-[:MENTIONS]->(e:Entity {namespace: $namespace})
OPTIONAL MATCH (newer:Memory {namespace: $namespace, id: m.superseded_by})
WITH m, speaker, collect(DISTINCT e.name) AS mentions, newer
RETURN m.seq AS seq, m.created_at AS at, coalesce(speaker.name, m.role) AS speaker, m.content AS message,
       mentions, newer.text AS superseded_by
ORDER BY seq
LIMIT 500
