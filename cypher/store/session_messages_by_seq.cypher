// purpose: messages of one session with start <= seq < end, in seq order (extraction windows)
// params:  $namespace, $session_id (string), $start, $end (int), $statuses (list<string>|null),
//          $newest_first (bool), $offset, $limit (int)
// mode:    read
MATCH (n:Message)
WHERE n.namespace = $namespace AND n.session_id = $session_id AND n.seq >= $start AND n.seq < $end
  AND ($statuses IS NULL OR n.status IN $statuses)
WITH n
ORDER BY CASE WHEN $newest_first THEN n.seq END DESC, CASE WHEN NOT $newest_first THEN n.seq END ASC
SKIP $offset LIMIT $limit
RETURN collect([n.kind, n.data, n.access_count, toString(n.last_accessed_at), n.id, [n.retiring, n.retire_data]]) AS rows
