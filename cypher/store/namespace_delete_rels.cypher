// purpose: delete one batch of the relationships of a namespace's nodes, before the nodes: a
//          node batch then holds no hub's thousands of relationships in one transaction (a 100k
//          namespace on a server with a 1 GiB heap ran out of transaction memory)
// params:  $namespace (string), $batch (int)
// mode:    write
MATCH (n:Record {namespace: $namespace})-[r]-()
WITH DISTINCT r LIMIT $batch
DELETE r
RETURN count(*) AS deleted
