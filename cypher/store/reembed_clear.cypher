// purpose: drop a batch of one vector property (the old vectors after a swap, or a re-embedding
//          started over) with the re-embedding queue flag; run until it clears fewer than $batch
// params:  $batch (int); {vector}: the vector property, embedding or embedding_b
// mode:    write
MATCH (n:Record)
WHERE n.{vector} IS NOT NULL OR n.reembed_pending IS NOT NULL
WITH n LIMIT $batch
REMOVE n.{vector}, n.reembed_pending
RETURN count(n) AS n
