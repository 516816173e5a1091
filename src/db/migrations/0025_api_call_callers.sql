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

-- A member's month total, the row every replica's batch adds to and reads back (as
-- api_call_totals is the account's): its row lock orders batches, so the member's cap is checked
-- against an exact total. A token's total is its api_call_caller_counts row.
CREATE TABLE api_call_member_totals (
  account_id text NOT NULL,
  month date NOT NULL CHECK (extract(day FROM month) = 1),
  user_id text NOT NULL,
  calls bigint NOT NULL CHECK (calls >= 0),
  PRIMARY KEY (account_id, month, user_id)
);

-- Caps an owner or admin sets on one member's or one token's calls a month (NULL: none beyond the
-- plan's), enforced by the meter like the plan's limit (docs/USAGE.md).
ALTER TABLE account_members ADD COLUMN monthly_api_calls bigint CHECK (monthly_api_calls >= 0);
ALTER TABLE api_tokens ADD COLUMN monthly_api_calls bigint CHECK (monthly_api_calls >= 0);
