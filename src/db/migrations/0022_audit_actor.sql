-- Who did it (issue #27): audit_events.user_id names the account whose trail an event belongs to
-- (its owner's user id); with members, the member who acted is another user. Kept as plain text,
-- with the email as it was, so the trail still says who did what after the member is removed
-- (a foreign key would erase or cascade it). NULL for events before accounts, and for actors that
-- are not members (the operator, the service itself).
ALTER TABLE audit_events ADD COLUMN actor_user_id text;
ALTER TABLE audit_events ADD COLUMN actor_email text;
