// purpose: set one metadata value
// params:  $namespace (string), $key (string), $value (string)
// mode:    write
MERGE (m:GraphMemMeta {namespace: $namespace, key: $key})
SET m.value = $value
