// purpose: queue a batch of nodes that carry vectors for a re-embedding (run until it marks
//          fewer than $batch); any namespace: the store holds one embedding model
// params:  $kinds (list<string>), $batch (int)
// mode:    write
MATCH (n:Record)
WHERE n.kind IN $kinds AND n.reembed_pending IS NULL
WITH n LIMIT $batch
SET n.reembed_pending = true
RETURN count(n) AS n
