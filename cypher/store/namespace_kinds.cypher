// purpose: which recallable kinds a namespace holds any node of: recall searches only those.
//          `id IS NOT NULL` lets each EXISTS seek the kind's (namespace, id) constraint index
//          instead of scanning the label (every tenant's nodes)
// params:  $namespace (string)
// mode:    read
RETURN EXISTS { MATCH (n:Memory {namespace: $namespace}) WHERE n.id IS NOT NULL } AS memory,
       EXISTS { MATCH (n:Message {namespace: $namespace}) WHERE n.id IS NOT NULL } AS message,
       EXISTS { MATCH (n:Episode {namespace: $namespace}) WHERE n.id IS NOT NULL } AS episode,
       EXISTS { MATCH (n:Procedure {namespace: $namespace}) WHERE n.id IS NOT NULL } AS procedure,
       EXISTS { MATCH (n:Trace {namespace: $namespace}) WHERE n.id IS NOT NULL } AS trace
