// purpose: the procedure steps that fail most (outcomes recorded by record_outcome and by
//          failed traces), with their procedure and the step before and after
// params:  $namespace (string)
// mode:    read
MATCH (p:Procedure {namespace: $namespace})-[:HAS_STEP]->(s:Step)
WHERE s.failure_count > 0 AND p.status = 'active'
OPTIONAL MATCH (before:Step {namespace: $namespace})-[:NEXT]->(s)
OPTIONAL MATCH (s)-[:NEXT]->(after:Step {namespace: $namespace})
RETURN p.task AS task, s.order AS step, s.text AS text, s.failure_count AS failures,
       p.failure_count AS procedure_failures, before.text AS previous, after.text AS next
ORDER BY failures DESC, task, step
LIMIT 50
