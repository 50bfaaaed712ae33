-- Runs submitted to a server wait as `queued` until one instance claims them. A claim
-- is a row here: the primary key makes a second claim of the same run impossible,
-- whatever the instances race on.
CREATE TABLE IF NOT EXISTS run_claims (
    run_id     TEXT   PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
    instance   TEXT   NOT NULL,
    claimed_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_status_created ON runs (status, created_at);
