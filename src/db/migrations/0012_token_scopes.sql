-- Token scopes (accounts/token-scope.ts): what an API token may do, fixed when it is created.
-- Every column has the value of an unscoped token as its default, so the tokens that exist keep
-- working exactly as before, and a replica still on the previous version can insert tokens.

-- True: only reads (GET on the management API; RLN's read-only routes through the gateway).
ALTER TABLE api_tokens ADD COLUMN read_only boolean NOT NULL DEFAULT false;
-- The nodes the token may reach; NULL: every node of its user. Not a foreign key (an array cannot
-- be one): a destroyed node's id simply matches nothing any more.
ALTER TABLE api_tokens ADD COLUMN node_ids text[];
-- Which listener accepts it: both, only the management API, or only the node gateways.
ALTER TABLE api_tokens ADD COLUMN access text NOT NULL DEFAULT 'all' CHECK (access IN ('all', 'api', 'gateway'));
