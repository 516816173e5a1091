-- Passkeys (WebAuthn, issue #38): a second factor beside TOTP, and a way to sign in without a
-- password. The relying party is PUBLIC_URL's host; the library (@simplewebauthn/server) checks
-- the signatures, this keeps what it needs between ceremonies.

-- A person's passkeys. credential_id and public_key are base64url as the browser and the library
-- give them (text, so PGlite and PostgreSQL hand back the same thing); counter is the
-- authenticator's signature counter, which must grow (a cloned authenticator shows as a step back).
CREATE TABLE user_passkeys (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  credential_id text NOT NULL UNIQUE,
  public_key text NOT NULL,
  counter bigint NOT NULL DEFAULT 0,
  transports text NOT NULL DEFAULT '',
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz
);
CREATE INDEX user_passkeys_user ON user_passkeys (user_id);

-- How a session signed in ('password', 'oidc' or 'passkey'; NULL for sessions older than this):
-- an owner without a password or a factor confirms a deletion with a fresh provider sign-in.
ALTER TABLE web_sessions ADD COLUMN signed_in_with text;

-- Challenges handed out, each used once and expiring within minutes. browser_key ties one to
-- whoever asked for it: the SHA-256 of the session cookie (enrolment, a second factor, a factor
-- confirmed) or of a one-off cookie (a password-less sign-in, before there is a session).
CREATE TABLE webauthn_challenges (
  challenge text PRIMARY KEY,
  purpose text NOT NULL,
  browser_key text NOT NULL,
  user_id text REFERENCES users (id) ON DELETE CASCADE,
  -- The client address that asked: a password-less sign-in's challenges are limited per address.
  address text,
  expires_at timestamptz NOT NULL
);
CREATE INDEX webauthn_challenges_address ON webauthn_challenges (address, purpose);
