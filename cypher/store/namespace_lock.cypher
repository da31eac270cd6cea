// purpose: hold off the namespace's other writers that create entities until this transaction
//          commits: the write lock of the namespace node (made first if new), taken before the
//          new entities' names are read (entity_names_find), so two processes creating the same
//          name take turns and the second finds the first's entity
// params:  $namespace (string), $now (datetime)
// mode:    write
MERGE (ns:GraphMemNamespace {name: $namespace})
ON CREATE SET ns.created_at = $now
SET ns.write_lock = true
REMOVE ns.write_lock
RETURN count(*) AS locked
