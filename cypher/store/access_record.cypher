// purpose: add buffered accesses: counts and the latest access time
// params:  $rows (list<{namespace, id, count: int, at: datetime}>)
// mode:    write
UNWIND $rows AS row
MATCH (n:Record {namespace: row.namespace, id: row.id})
SET n.access_count = coalesce(n.access_count, 0) + row.count,
    n.last_accessed_at = CASE WHEN n.last_accessed_at IS NULL OR n.last_accessed_at < row.at
                              THEN row.at ELSE n.last_accessed_at END
