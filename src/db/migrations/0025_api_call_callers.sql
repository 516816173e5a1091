-- Who spent an account's API calls (issue #36): each month's calls per member and per API token,
-- added by the same batch statement as api_call_counts (usage/api-call-meter.ts, db/usage.ts
-- addApiCalls). token_id '' holds a member's calls without a token (the web session). No foreign
-- keys: a removed member's or a revoked token's calls stay in the month they were made.
CREATE TABLE api_call_caller_counts (
  account_id text NOT NULL,
  month date NOT NULL CHECK (extract(day FROM month) = 1),
  user_id text NOT NULL,
  token_id text NOT NULL DEFAULT '',
  calls bigint NOT NULL CHECK (calls >= 0),
  PRIMARY KEY (account_id, month, user_id, token_id)
);
