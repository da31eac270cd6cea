// purpose: how many nodes carry a label, from the count store (constant time): picks the
//          vector search strategy
// params:  {label}: a kind's label
// mode:    read
MATCH (n:{label})
RETURN count(n) AS n
