// purpose: whether any node of a label holds an embedding (a vector index may only be rebuilt
//          with another dimension when none does)
// params:  $prop (string): a vector property; {label}: a kind's label
// mode:    read
MATCH (n:{label})
WHERE n[$prop] IS NOT NULL
RETURN count(n) > 0 AS found
LIMIT 1
