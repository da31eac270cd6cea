// purpose: which recallable kinds a namespace holds any node of: recall searches only those
//          (each EXISTS is one seek on the kind's (namespace, id) constraint index)
// params:  $namespace (string)
// mode:    read
RETURN EXISTS { MATCH (:Memory {namespace: $namespace}) } AS memory,
       EXISTS { MATCH (:Message {namespace: $namespace}) } AS message,
       EXISTS { MATCH (:Episode {namespace: $namespace}) } AS episode,
       EXISTS { MATCH (:Procedure {namespace: $namespace}) } AS procedure,
       EXISTS { MATCH (:Trace {namespace: $namespace}) } AS trace
