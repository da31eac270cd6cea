// purpose: register a namespace on its first write
// params:  $namespace (string), $now (datetime)
// mode:    write
MERGE (ns:GraphMemNamespace {name: $namespace})
ON CREATE SET ns.created_at = $now
