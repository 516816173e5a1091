-- Customers' own node tokens (issue #40, point 4): Biscuits minted with a node's root key that the
-- bearer gateway passes on to the node. The token itself is answered once and never stored in
-- clear: what a revocation must send the node again (RLN's POST /revoketoken takes the whole token,
-- and a node's own revoked list is lost with its volume) is kept sealed with the unlock seal, bound
-- to the token's id. The gateway finds a presented token by its first revocation identifier.
-- minted_by is no foreign key: a removed member's tokens must stay, revoked, to be re-sent.
-- Rolling update: a new table, which the previous version never reads.
CREATE TABLE node_tokens (
  id text PRIMARY KEY,
  node_id text NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
  -- 'admin' | 'read-only' | 'custom', as RLN's role() fact.
  role text NOT NULL,
  -- JSON array of RLN route names ('/nodeinfo') for a custom token; '[]' otherwise.
  routes text NOT NULL DEFAULT '[]',
  expires_at timestamptz NOT NULL,
  minted_by text NOT NULL,
  -- The authority block's revocation identifier (hex): what the gateway looks a token up by.
  revocation_id text NOT NULL UNIQUE,
  -- JSON array of every revocation identifier of the token as minted.
  revocation_ids text NOT NULL,
  sealed_token text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  -- Why: 'revoked' (by a member), 'minter_role' (the minter was demoted or removed).
  revoked_reason text,
  -- When the node last took the revocation (POST /revoketoken); null: still to be sent.
  node_told_at timestamptz
);
CREATE INDEX node_tokens_node ON node_tokens (node_id, created_at);
CREATE INDEX node_tokens_minter ON node_tokens (minted_by) WHERE revoked_at IS NULL;
