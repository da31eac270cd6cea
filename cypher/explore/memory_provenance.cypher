// purpose: where a memory came from: the episode that produced it and the messages it was
//          derived from, in conversation order
// params:  $namespace (string), $memory_id (string)
// mode:    read
MATCH (m:Memory {namespace: $namespace, id: $memory_id})
OPTIONAL MATCH (e:Episode {namespace: $namespace})-[:PRODUCED]->(m)
OPTIONAL MATCH (m)-[:DERIVED_FROM]->(msg:Message {namespace: $namespace})
RETURN m.text AS memory, e.summary AS episode, msg.session_id AS session, msg.seq AS seq,
       msg.speaker AS speaker, msg.content AS message
ORDER BY seq
