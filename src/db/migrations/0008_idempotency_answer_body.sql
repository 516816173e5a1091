-- An idempotency key keeps the first answer's body; the HTTP status it went out with is the API's
-- business (a creation answers 200), so the service no longer writes response_status. The column
-- is only relaxed here, not dropped, so a replica still running the previous version (which
-- writes it) keeps working during a rolling upgrade; a later migration may drop it.
ALTER TABLE idempotency_keys ALTER COLUMN response_status DROP NOT NULL;
