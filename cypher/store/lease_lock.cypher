// purpose: read a lease (kept as a GraphMemMeta node) holding its node's write lock until the
//          transaction ends, with the server's clock in seconds: the claims of one key run one
//          after another, from any process on any machine, and all are judged by one clock
// params:  $namespace (string), $key (string): the lease's name (lease:...)
// mode:    write
MERGE (m:GraphMemMeta {namespace: $namespace, key: $key})
SET m.locked_at = timestamp()
RETURN m.value AS value, timestamp() / 1000.0 AS now
