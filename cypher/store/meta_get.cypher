// purpose: read one metadata value (namespace '' holds the store's own: schema, embedder, dim)
// params:  $namespace (string), $key (string)
// mode:    read
MATCH (m:GraphMemMeta {namespace: $namespace, key: $key})
RETURN m.value AS value
