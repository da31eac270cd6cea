// purpose: learned workflows with their ordered steps, the most often seen first
// params:  $namespace (string)
// mode:    read
MATCH (p:Procedure {namespace: $namespace})
WHERE p.status = 'active'
RETURN p.id AS procedure, p.task AS task, p.steps AS steps, p.seen_count AS seen, p.success_count AS succeeded
ORDER BY seen DESC, p.created_at DESC
LIMIT 50
