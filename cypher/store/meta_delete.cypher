// purpose: remove one metadata value
// params:  $namespace (string), $key (string)
// mode:    write
MATCH (m:GraphMemMeta {namespace: $namespace, key: $key})
DELETE m
