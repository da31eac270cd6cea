// purpose: the server's Neo4j version (5.26.x, 2026.08.x, ...): the store picks its vector
//          search and index form by it at connect
// params:  none
// mode:    read
CALL dbms.components() YIELD name, versions
WHERE name = 'Neo4j Kernel'
RETURN versions[0] AS version
