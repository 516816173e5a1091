-- Client certificates issued by the service's certificate authority for mutual-TLS node access.
-- Only the record is kept: the private key is handed to the user once and never stored, and the
-- certificate itself can be rebuilt from nothing here (nor needs to be).

CREATE TABLE client_certificates (
  -- Lowercase hex of the X.509 serial number (128 random bits): what the gateway looks up.
  serial text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  node_id text NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
  -- SHA-256 of the DER certificate, lowercase hex: the gateway checks it too, so a serial alone
  -- (for instance one reused by a different CA the operator once configured) is never enough.
  fingerprint text NOT NULL,
  not_before timestamptz NOT NULL,
  not_after timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX client_certificates_node ON client_certificates (node_id, created_at);
