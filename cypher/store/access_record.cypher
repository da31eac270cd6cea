// purpose: add buffered accesses: counts and the latest access time
// params:  $rows (list<{namespace, id, count: int, at: [epoch seconds, nanoseconds]}>)
// mode:    write
UNWIND $rows AS row
WITH row, datetime({epochSeconds: row.at[0], nanosecond: row.at[1]}) AS at
MATCH (n:Record {namespace: row.namespace, id: row.id})
SET n.access_count = coalesce(n.access_count, 0) + row.count,
    n.last_accessed_at = CASE WHEN n.last_accessed_at IS NULL OR n.last_accessed_at < at
                              THEN at ELSE n.last_accessed_at END
