// purpose: the newest nodes of one session (context's recent turns; a session's last episode):
//          the hot path, so it seeks the (namespace, session_id, created_at) index
// params:  $namespace, $session_id (string), $statuses (list<string>|null), $limit (int);
//          {label}: Message or Episode
// mode:    read
MATCH (n:{label})
WHERE n.namespace = $namespace AND n.session_id = $session_id AND n.created_at IS NOT NULL
  AND ($statuses IS NULL OR n.status IN $statuses)
WITH n
ORDER BY n.created_at DESC, n.id DESC
LIMIT $limit
RETURN collect([n.kind, n.data, n.access_count, toString(n.last_accessed_at), n.id, [n.retiring, n.retire_data]]) AS rows
