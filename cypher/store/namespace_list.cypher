// purpose: every namespace written to, by name
// params:  none
// mode:    read
MATCH (ns:GraphMemNamespace)
RETURN ns.name AS name
ORDER BY name
