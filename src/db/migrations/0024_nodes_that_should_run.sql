-- A reconcile pass reads the nodes whose daemon should run (nodes/reconcile.ts), a tenth of a
-- fleet that is mostly paused, a page at a time in id order. This index holds only those, so a
-- pass over 10,000 nodes reads 1,000 index entries instead of walking the whole primary key.
-- The condition is daemonShouldRun's (nodes/lifecycle.ts).
CREATE INDEX nodes_daemon_should_run ON nodes (id)
  WHERE status = 'RUNNING' AND desired_state = 'running' AND superseded_by IS NULL;
