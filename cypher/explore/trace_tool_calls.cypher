// purpose: one agent run (a trace) step by step, along its NEXT chain, with each step's tool
//          calls, their status and duration; the newest trace when $trace_id matches none
// params:  $namespace (string), $trace_id (string): a trace id, or any other value for the newest
// mode:    read
MATCH (t:Trace {namespace: $namespace})
WITH t ORDER BY (t.id = $trace_id) DESC, t.created_at DESC LIMIT 1
MATCH (t)-[:HAS_STEP]->(s:TraceStep {namespace: $namespace})
OPTIONAL MATCH (s)-[:CALLED]->(c:ToolCall {namespace: $namespace})-[:OF_TOOL]->(tool:Tool)
WITH t, s, c, tool ORDER BY s.order, c.created_at
RETURN t.id AS trace, t.task AS task, t.success AS success, s.order AS step, s.text AS did,
       collect(CASE WHEN c IS NULL THEN null
               ELSE tool.name + ' ' + c.status + coalesce(' ' + toString(c.duration_ms) + ' ms', '') END) AS tool_calls
ORDER BY step
