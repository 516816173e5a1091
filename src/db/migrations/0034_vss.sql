-- VSS (issue #42): LDK's Versioned Storage Service served by the service itself (docs/VSS.md).

-- One store per node: the credential in the node's VSS URL (its SHA-256; the URL is the secret),
-- and the secp256k1 key bound by the first signed write (NULL until then). The account is the
-- node's, kept here so usage sums without a join. The store outlives its node's destruction by
-- VSS_RETENTION_DAYS (the node's disk may be gone; the store is how its channels come back).
CREATE TABLE vss_stores (
  node_id text PRIMARY KEY REFERENCES nodes (id) ON DELETE CASCADE,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  credential_hash text NOT NULL UNIQUE,
  pubkey text,
  bound_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- The reference server's rows, keyed by (its store, the client's store_id, key); `value` is NULL
-- when the bytes are in the blob store under `blob_key`. `bytes` is the value's length either way.
CREATE TABLE vss_objects (
  node_id text NOT NULL REFERENCES vss_stores (node_id) ON DELETE CASCADE,
  store_id text NOT NULL,
  key text NOT NULL,
  version bigint NOT NULL,
  value bytea,
  blob_key text,
  bytes bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (node_id, store_id, key)
);

-- global_version per client store_id (0 before the first conditional put); kept apart from the
-- keys so no client key can collide with it and listings never show it.
CREATE TABLE vss_global_versions (
  node_id text NOT NULL REFERENCES vss_stores (node_id) ON DELETE CASCADE,
  store_id text NOT NULL,
  version bigint NOT NULL,
  PRIMARY KEY (node_id, store_id)
);
