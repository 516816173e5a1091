-- Web UI sessions and the sign-in rate limit.

-- One row per signed-in browser. Only a SHA-256 of the session id is stored (like API tokens), so
-- a read of this table does not hand out live sessions. The CSRF token is per session: the page
-- reads it once and sends it back in a header on every state-changing request.
CREATE TABLE web_sessions (
  id_hash text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  csrf_token text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX web_sessions_user ON web_sessions (user_id);
CREATE INDEX web_sessions_expires ON web_sessions (expires_at);

-- Failed sign-ins counted per key ("email:<address>", "ip:<address>") in a fixed window, in the
-- database so that every replica sees the same count.
CREATE TABLE sign_in_failures (
  key text PRIMARY KEY,
  failures integer NOT NULL,
  window_started_at timestamptz NOT NULL
);
