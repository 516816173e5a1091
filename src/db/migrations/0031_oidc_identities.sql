-- OpenID Connect sign-in (issue #38): a person's identities at the operator's providers, keyed on
-- what the provider vouches for (issuer and subject), never on an email, which can change hands.
CREATE TABLE oidc_identities (
  issuer text NOT NULL,
  subject text NOT NULL,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- The operator's name for the provider (OIDC_PROVIDERS' id), for the account's list and unlinking.
  provider text NOT NULL,
  -- What the provider said at linking, shown to the person; never used to find them.
  email text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (issuer, subject)
);
CREATE INDEX oidc_identities_user ON oidc_identities (user_id);

-- Sign-ins under way: the state's SHA-256, its nonce and PKCE verifier, for a few minutes. The
-- callback deletes the row it uses, so a state (and its nonce) works once. link_user_id: a
-- signed-in person adding a provider rather than a sign-in.
CREATE TABLE oidc_logins (
  state_hash text PRIMARY KEY,
  provider text NOT NULL,
  nonce text NOT NULL,
  code_verifier text NOT NULL,
  link_user_id text REFERENCES users (id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL
);
CREATE INDEX oidc_logins_expiry ON oidc_logins (expires_at);
