-- The audit trail: security-relevant actions (tokens, certificates, unlocks, automatic unlock,
-- destroys, backups, releases, sign-ins), who did them from where, and whether they succeeded.
-- Written after the action, never in its way; read by the user for their own resources
-- (GET /api/audit-events) and by the operator (rln-cloud audit list).
CREATE TABLE audit_events (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  -- Whose resource it is (the trail a user reads); NULL for the operator's own actions (releases).
  user_id text REFERENCES users (id) ON DELETE CASCADE,
  -- Who did it: token:<id>, session, gateway:bearer, gateway:mtls, operator, service.
  actor text NOT NULL,
  source_ip text,
  action text NOT NULL,
  -- What it was done to: a node id, a token id, a certificate serial, a version, an email.
  target text,
  outcome text NOT NULL CHECK (outcome IN ('succeeded', 'failed')),
  details jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_events_user ON audit_events (user_id, id);
CREATE INDEX audit_events_at ON audit_events (at);
