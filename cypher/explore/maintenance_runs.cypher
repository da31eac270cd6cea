// purpose: the audit trail of the lifecycle: each maintenance run with what it merged, expired,
//          capped and purged (the ids and reasons are in `data`, and in `graphmem maintain --history`)
// params:  $namespace (string)
// mode:    read
MATCH (r:MaintenanceRun {namespace: $namespace})
RETURN r.id AS run, r.created_at AS at, r.dry_run AS dry_run, r.merged AS merged, r.expired AS expired,
       r.capped AS capped, r.purged AS purged, r.active_before AS active_before, r.active_after AS active_after,
       r.seconds AS seconds
ORDER BY at DESC
LIMIT 50
