-- Named leases: work that exactly one replica may do at a time (the reconcile loop). A holder
-- renews its lease well before it expires; another replica takes it over only once it expired,
-- so a replica that dies hands it on after one TTL, and one that stops cleanly hands it on at once.
CREATE TABLE leases (
  name text PRIMARY KEY,
  holder text NOT NULL,
  acquired_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
