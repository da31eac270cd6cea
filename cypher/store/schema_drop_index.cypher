// purpose: drop one of graphmem's vector indexes so init can rebuild it with the configured
//          dimension (only when no node of its label holds an embedding)
// params:  $name (string): the index name
// mode:    schema
DROP INDEX $name IF EXISTS
