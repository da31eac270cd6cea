// purpose: one node per (namespace, id): across every kind (Record) and within each kind label.
//          Each constraint also gives the index that id lookups seek on.
// params:  none
// mode:    schema (idempotent: IF NOT EXISTS)
CREATE CONSTRAINT record_id IF NOT EXISTS FOR (n:Record) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT memory_id IF NOT EXISTS FOR (n:Memory) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT message_id IF NOT EXISTS FOR (n:Message) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT episode_id IF NOT EXISTS FOR (n:Episode) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT procedure_id IF NOT EXISTS FOR (n:Procedure) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT entity_id IF NOT EXISTS FOR (n:Entity) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT session_id IF NOT EXISTS FOR (n:Session) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT step_id IF NOT EXISTS FOR (n:Step) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT trace_id IF NOT EXISTS FOR (n:Trace) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT trace_step_id IF NOT EXISTS FOR (n:TraceStep) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT tool_call_id IF NOT EXISTS FOR (n:ToolCall) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT tool_id IF NOT EXISTS FOR (n:Tool) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT maintenance_id IF NOT EXISTS FOR (n:MaintenanceRun) REQUIRE (n.namespace, n.id) IS UNIQUE;
CREATE CONSTRAINT namespace_name IF NOT EXISTS FOR (n:GraphMemNamespace) REQUIRE n.name IS UNIQUE;
CREATE CONSTRAINT meta_key IF NOT EXISTS FOR (n:GraphMemMeta) REQUIRE (n.namespace, n.key) IS UNIQUE;
