-- A node whose volume is gone (issue #43): the service marks it STORAGE_LOST (nodes/storage-lost.ts)
-- and POST /api/nodes/{id}/recover brings it up on a fresh, empty volume through a `recover` build,
-- whose step REPLACING_VOLUME removes what is left of the old volume once its daemon is gone.
--
-- Rolling update: only constraints relaxed. The previous version never writes these words; a node
-- it reads as STORAGE_LOST is a status it does not know (its own CHECK is gone with this migration).
-- node_status_as_recorded needs nothing: STORAGE_LOST is recorded as itself, a word no bill counts
-- (domain/node-status-meaning.ts).
ALTER TABLE nodes DROP CONSTRAINT nodes_status_check;
ALTER TABLE nodes ADD CONSTRAINT nodes_status_check
  CHECK (status IN ('STARTING', 'RUNNING', 'IN_PROGRESS', 'PAUSED', 'FAILED', 'STORAGE_LOST', 'EXPORTED', 'DESTROYING', 'DESTROYED'));

ALTER TABLE builds DROP CONSTRAINT builds_action_check;
ALTER TABLE builds ADD CONSTRAINT builds_action_check
  CHECK (action IN ('create', 'start', 'stop', 'upgrade', 'destroy', 'recover'));

ALTER TABLE builds DROP CONSTRAINT builds_phase_check;
ALTER TABLE builds ADD CONSTRAINT builds_phase_check
  CHECK (phase IN ('PROVISIONING', 'STARTING_DAEMON', 'REPLACING_IMAGE', 'WAITING_FOR_DAEMON', 'RESTORING_BACKUP',
                   'ROLLING_BACK', 'STOPPING_DAEMON', 'DESTROYING', 'REPLACING_VOLUME'));
