// purpose: range indexes on namespace, status and timestamps for listing, filtering and ordering;
//          session and seq for conversation windows; entity names; relation provenance.
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
CREATE INDEX maintenance_created IF NOT EXISTS FOR (n:MaintenanceRun) ON (n.namespace, n.created_at);
CREATE INDEX entity_name_norm IF NOT EXISTS FOR (n:EntityName) ON (n.namespace, n.norm);
CREATE INDEX entity_name_entity IF NOT EXISTS FOR (n:EntityName) ON (n.namespace, n.entity_id);
CREATE INDEX relates_to_memory IF NOT EXISTS FOR ()-[r:RELATES_TO]-() ON (r.memory_id);
