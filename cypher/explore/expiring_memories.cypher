// purpose: memories close to expiry: the lifecycle (graphmem maintain) archives active, unpinned
//          memories of importance below 0.1 unused for 120 days (the default settings); this lists
//          those within $warn_days of it, plus facts whose validity ends within $warn_days
// params:  $namespace (string), $warn_days (int, optional, default 14)
// mode:    read
WITH datetime() AS now, coalesce($warn_days, 14) AS warn
MATCH (m:Memory {namespace: $namespace})
WHERE m.status = 'active' AND coalesce(m.pinned, false) = false
WITH m, now, warn, coalesce(m.last_accessed_at, m.created_at) AS last_used
WITH m, now, warn, last_used,
     CASE WHEN m.importance < 0.1 THEN last_used + duration({days: 120}) END AS unused_expiry,
     CASE WHEN m.invalid_at > now THEN m.invalid_at END AS validity_end
WHERE unused_expiry < now + duration({days: warn}) OR validity_end < now + duration({days: warn})
RETURN m.id AS memory, m.text AS text, m.importance AS importance, last_used,
       coalesce(validity_end, unused_expiry) AS expires, CASE WHEN validity_end IS NOT NULL THEN 'validity ends'
       ELSE 'unused' END AS why
ORDER BY expires
LIMIT 100
