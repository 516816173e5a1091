-- Each node's Biscuit root key (issue #40): the node runs RLN with --root-public-key <public_key>
-- and accepts only tokens the service mints with the private half. The private half is sealed with
-- the unlock seal (secrets/unlock-seal.ts, bound to the node id) and re-sealed by a rotation of its
-- key; it is never given to the node. A node created before this migration gets its row at its next
-- start and runs with --disable-authentication until then (secrets/node-root-keys.ts).
-- Rolling update: a new table, which the previous version never reads.
CREATE TABLE node_root_keys (
  node_id text PRIMARY KEY REFERENCES nodes (id) ON DELETE CASCADE,
  -- 64 hex characters: the Ed25519 public key, as RLN's --root-public-key takes it.
  public_key text NOT NULL,
  sealed_private_key text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
