// purpose: delete nodes with every relationship they have
// params:  $namespace (string), $ids (list<string>)
// mode:    write
MATCH (n:Record {namespace: $namespace})
WHERE n.id IN $ids
DETACH DELETE n
RETURN count(*) AS deleted
