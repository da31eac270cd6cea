// purpose: delete the RELATES_TO edges derived from memories that are being deleted
// params:  $namespace (string), $ids (list<string>): memory ids
// mode:    write
MATCH (a:Entity)-[r:RELATES_TO]->(:Entity)
WHERE r.memory_id IN $ids AND a.namespace = $namespace
DELETE r
