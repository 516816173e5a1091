-- A second factor at sign-in (issue #38): TOTP with one-time recovery codes, and an owner's rule
-- that every member of the account has one.

-- A person's TOTP secret (RFC 6238). Unconfirmed (confirmed_at NULL) until a first code proves the
-- authenticator has it; last_step is the time step of the last code accepted, so no code is
-- accepted twice (a replay inside its window is refused).
CREATE TABLE user_totp (
  user_id text PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  secret text NOT NULL,
  confirmed_at timestamptz,
  last_step bigint,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Ten one-time recovery codes per person, only their SHA-256 kept; used_at once spent.
CREATE TABLE user_recovery_codes (
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code_hash text NOT NULL,
  used_at timestamptz,
  PRIMARY KEY (user_id, code_hash)
);

-- The owner's rule: every member signs in with two factors.
ALTER TABLE accounts ADD COLUMN require_two_factors boolean NOT NULL DEFAULT false;

-- A session's stage: 'full' (signed in), 'second_factor' (the password was right, a code is
-- still owed) or 'enrol' (the account requires two factors and this person has none yet: only
-- the enrolment routes answer it).
ALTER TABLE web_sessions ADD COLUMN stage text NOT NULL DEFAULT 'full';
