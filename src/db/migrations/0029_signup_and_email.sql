-- Customers sign themselves up (issue #45): an email outbox, verified addresses, one-time email
-- links (verification, password reset) and accounts that wait for the operator's approval.

-- Every email the service sends, written in the transaction of the change it tells about and sent
-- by a job (mail/send-email-job.ts). The id is the Message-ID's local part: a resend after a crash
-- carries the same Message-ID, so a mail system can recognise the second copy. With no SMTP_URL
-- (a laptop) messages stay here unsent and `rln-cloud mail list|show` prints them.
CREATE TABLE email_outbox (
  id text PRIMARY KEY,
  kind text NOT NULL,
  recipient text NOT NULL,
  subject text NOT NULL,
  text_body text NOT NULL,
  html_body text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz
);
-- "At most one sign-up attempt notice a day per address" looks here.
CREATE INDEX email_outbox_recipient ON email_outbox (recipient, kind, created_at);
CREATE INDEX email_outbox_created ON email_outbox (created_at);

-- NULL: the person has not proved they read this address yet and cannot sign in. Everyone who
-- exists before this migration was typed in by the operator or accepted an invitation: verified.
ALTER TABLE users ADD COLUMN email_verified_at timestamptz;
UPDATE users SET email_verified_at = created_at;

-- One-time links: only a SHA-256 of the secret is stored (like API tokens), bound to its purpose
-- and its person; used_at makes a replay fail.
CREATE TABLE email_links (
  token_hash text PRIMARY KEY,
  purpose text NOT NULL CHECK (purpose IN ('verify', 'reset')),
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX email_links_user ON email_links (user_id, purpose);

-- SIGNUP_MODE=approval: the account exists but waits until the operator approves it (NULL: not waiting).
ALTER TABLE accounts ADD COLUMN awaiting_approval_since timestamptz;
