// purpose: tools by their mean call duration (slowest first), with calls, failures and p95
// params:  $namespace (string)
// mode:    read
MATCH (c:ToolCall {namespace: $namespace})-[:OF_TOOL]->(tool:Tool)
WITH tool.name AS tool, count(c) AS calls, sum(CASE WHEN c.status = 'success' THEN 0 ELSE 1 END) AS failed,
     avg(c.duration_ms) AS mean_ms, percentileCont(c.duration_ms, 0.95) AS p95_ms
RETURN tool, calls, failed, round(1.0 * (calls - failed) / calls, 3) AS success_rate,
       round(mean_ms, 1) AS mean_ms, round(p95_ms, 1) AS p95_ms
ORDER BY mean_ms DESC
LIMIT 50
