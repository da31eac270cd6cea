// purpose: how many nodes mention each entity or were said by it (MENTIONS in, SAID out): how
//          much of the namespace is about it (recall weighs a named entity's evidence by it)
// params:  $namespace (string), $ids (list<string>): entity ids
// mode:    read
UNWIND $ids AS id
MATCH (e:Entity {namespace: $namespace, id: id})
WITH e, COUNT { (e)<-[:MENTIONS]-() } + COUNT { (e)-[:SAID]->() } AS n
WHERE n > 0
RETURN collect([e.id, n]) AS rows
