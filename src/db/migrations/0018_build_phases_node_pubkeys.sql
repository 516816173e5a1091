-- What a build in progress is doing now (the API's Build.currentPhase), written by the build job
-- as it moves from step to step. Null until the job first picks the build up (QUEUED). A finished
-- build's phase is its outcome (DONE, FAILED), read from its status, so only these are stored.
--
-- During a rolling update the previous version neither reads nor writes the column: a build it
-- carries out keeps a null phase and shows QUEUED until it finishes (then DONE or FAILED).
ALTER TABLE builds ADD COLUMN phase text
  CHECK (phase IN ('PROVISIONING', 'STARTING_DAEMON', 'REPLACING_IMAGE', 'WAITING_FOR_DAEMON', 'RESTORING_BACKUP',
                   'ROLLING_BACK', 'STOPPING_DAEMON', 'DESTROYING'));

-- The node pubkey a node's daemon reported after its last unlock (GET /nodeinfo): two live nodes
-- reporting one pubkey run one wallet (a recovery phrase or a backup used twice), which the
-- service warns about (nodes/node-identity.ts). Null until the first unlock; the previous version
-- neither reads nor writes it.
ALTER TABLE nodes ADD COLUMN node_pubkey text;
CREATE INDEX nodes_node_pubkey ON nodes (node_pubkey) WHERE node_pubkey IS NOT NULL;
