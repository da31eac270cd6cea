// purpose: active procedures with their steps in order, walked along the chain
//          (FIRST_STEP, then NEXT), each step with how often it failed; the most often seen first
// params:  $namespace (string)
// mode:    read
MATCH (p:Procedure {namespace: $namespace})-[:FIRST_STEP]->(first:Step)
WHERE p.status = 'active'
MATCH chain = (first)-[:NEXT*0..]->(last:Step {namespace: $namespace})
WHERE NOT (last)-[:NEXT]->(:Step {namespace: $namespace})
RETURN p.id AS procedure, p.task AS task,
       [s IN nodes(chain) | toString(s.order) + '. ' + s.text] AS steps,
       [s IN nodes(chain) | s.failure_count] AS step_failures,
       p.seen_count AS seen, p.success_count AS succeeded, p.failure_count AS failed
ORDER BY seen DESC, p.created_at DESC
LIMIT 50
