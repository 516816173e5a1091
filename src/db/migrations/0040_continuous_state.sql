-- Continuous node state (issue #43): whether the node's daemon writes its state to the service's
-- VSS (`--vss-url`, docs/VSS.md), a node setting decided at creation from its release's features
-- (domain/release-features.ts). Existing nodes keep running as they did: off.
ALTER TABLE nodes ADD COLUMN continuous_state boolean NOT NULL DEFAULT false;

-- The node's VSS URL credential, sealed with the unlock seal's key (secrets/unlock-seal.ts), so
-- the runtime hands the daemon the same URL at every start (vss/node-urls.ts): a new one would
-- cut off a copy still running and, on Kubernetes, change the pod's spec at every start. NULL for
-- a URL issued without it (the credential is then only known by its hash).
ALTER TABLE vss_stores ADD COLUMN sealed_credential text;
