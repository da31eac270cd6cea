// purpose: range indexes on namespace, status and timestamps for listing, filtering and ordering;
//          session and seq for conversation windows; entity names; relation provenance; a
//          procedure's steps and a trace's steps and tool calls in order; tools by name.
// params:  none
// mode:    schema (idempotent: IF NOT EXISTS)
CREATE INDEX memory_status_created IF NOT EXISTS FOR (n:Memory) ON (n.namespace, n.status, n.created_at);
CREATE INDEX memory_valid IF NOT EXISTS FOR (n:Memory) ON (n.namespace, n.valid_at, n.invalid_at);
CREATE INDEX episode_status_created IF NOT EXISTS FOR (n:Episode) ON (n.namespace, n.status, n.created_at);
CREATE INDEX procedure_status_created IF NOT EXISTS FOR (n:Procedure) ON (n.namespace, n.status, n.created_at);
CREATE INDEX message_status_created IF NOT EXISTS FOR (n:Message) ON (n.namespace, n.status, n.created_at);
CREATE INDEX message_session_created IF NOT EXISTS FOR (n:Message) ON (n.namespace, n.session_id, n.created_at);
CREATE INDEX message_session_seq IF NOT EXISTS FOR (n:Message) ON (n.namespace, n.session_id, n.seq);
CREATE INDEX episode_session_created IF NOT EXISTS FOR (n:Episode) ON (n.namespace, n.session_id, n.created_at);
CREATE INDEX session_created IF NOT EXISTS FOR (n:Session) ON (n.namespace, n.created_at);
CREATE INDEX entity_created IF NOT EXISTS FOR (n:Entity) ON (n.namespace, n.created_at);
CREATE INDEX record_vector_pending IF NOT EXISTS FOR (n:Record) ON (n.vector_pending);
CREATE INDEX record_reembed_pending IF NOT EXISTS FOR (n:Record) ON (n.reembed_pending);
CREATE INDEX record_retire_pending IF NOT EXISTS FOR (n:Record) ON (n.retire_pending);
CREATE INDEX step_procedure IF NOT EXISTS FOR (n:Step) ON (n.namespace, n.procedure_id, n.order);
CREATE INDEX step_status_created IF NOT EXISTS FOR (n:Step) ON (n.namespace, n.status, n.created_at);
CREATE INDEX trace_status_created IF NOT EXISTS FOR (n:Trace) ON (n.namespace, n.status, n.created_at);
CREATE INDEX trace_session_created IF NOT EXISTS FOR (n:Trace) ON (n.namespace, n.session_id, n.created_at);
CREATE INDEX trace_step_created IF NOT EXISTS FOR (n:TraceStep) ON (n.namespace, n.created_at);
CREATE INDEX tool_call_created IF NOT EXISTS FOR (n:ToolCall) ON (n.namespace, n.created_at);
CREATE INDEX tool_call_tool IF NOT EXISTS FOR (n:ToolCall) ON (n.namespace, n.tool);
CREATE INDEX tool_created IF NOT EXISTS FOR (n:Tool) ON (n.namespace, n.created_at);
CREATE INDEX maintenance_created IF NOT EXISTS FOR (n:MaintenanceRun) ON (n.namespace, n.created_at);
CREATE INDEX entity_name_norm IF NOT EXISTS FOR (n:EntityName) ON (n.namespace, n.norm);
CREATE INDEX entity_name_entity IF NOT EXISTS FOR (n:EntityName) ON (n.namespace, n.entity_id);
CREATE INDEX relates_to_memory IF NOT EXISTS FOR ()-[r:RELATES_TO]-() ON (r.memory_id);
