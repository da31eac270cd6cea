// purpose: nodes of one kind, filtered (each filter applies when its parameter is not null),
//          newest or oldest first by creation time, paged
// params:  $namespace (string), $statuses (list<string>|null), $session_id, $category (string|null),
//          $since, $until (datetime|null), $ids (list<string>|null), $mentions (an entity id
//          the node MENTIONS, or null: read in this same statement), $user_id, $agent_id, $run_id
//          (string|null: whose the node is), $newest_first (bool),
//          $offset, $limit (int); {label}: the kind's label
// mode:    read
MATCH (n:{label})
WHERE n.namespace = $namespace
  AND ($statuses IS NULL OR n.status IN $statuses)
  AND ($session_id IS NULL OR n.session_id = $session_id)
  AND ($category IS NULL OR n.category = $category)
  AND ($user_id IS NULL OR n.user_id = $user_id)
  AND ($agent_id IS NULL OR n.agent_id = $agent_id)
  AND ($run_id IS NULL OR n.run_id = $run_id)
  AND ($since IS NULL OR n.created_at >= $since)
  AND ($until IS NULL OR n.created_at < $until)
  AND ($ids IS NULL OR n.id IN $ids)
  AND ($mentions IS NULL OR EXISTS { (n)-[:MENTIONS]->(:Entity {namespace: $namespace, id: $mentions}) })
WITH n
ORDER BY CASE WHEN $newest_first THEN n.created_at END DESC,
         CASE WHEN $newest_first THEN n.id END DESC,
         CASE WHEN NOT $newest_first THEN n.created_at END ASC,
         CASE WHEN NOT $newest_first THEN n.id END ASC
SKIP $offset LIMIT $limit
RETURN collect([n.kind, n.data, n.access_count, toString(n.last_accessed_at), n.id, [n.retiring, n.retire_data]]) AS rows
