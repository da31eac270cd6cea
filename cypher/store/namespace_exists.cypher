// purpose: whether anything was ever written to a namespace
// params:  $namespace (string)
// mode:    read
MATCH (ns:GraphMemNamespace {name: $namespace})
RETURN count(ns) > 0 AS found
