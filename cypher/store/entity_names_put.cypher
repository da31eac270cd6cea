// purpose: replace the normalised names (name and aliases) an entity is found by
// params:  $namespace (string), $rows (list<{entity_id, norms: list<string>}>)
// mode:    write
UNWIND $rows AS row
CALL (row) {
  OPTIONAL MATCH (old:EntityName {namespace: $namespace, entity_id: row.entity_id})
  DELETE old
}
WITH row
UNWIND row.norms AS norm
CREATE (:EntityName {namespace: $namespace, norm: norm, entity_id: row.entity_id})
