-- Plan history: one audit row per plan, hashes only (seed 000).
CREATE TABLE IF NOT EXISTS plan_history (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    caller      TEXT    NOT NULL,
    intent_sha  TEXT    NOT NULL,
    complexity  TEXT    NOT NULL,
    steps       TEXT    NOT NULL, -- JSON [{order, tool, args_sha}]
    tools       TEXT    NOT NULL, -- ",a,b," for tool filters
    outcome     TEXT    NOT NULL,
    at_unix     INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    model       TEXT,
    planner     TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS plan_history_caller_intent ON plan_history (caller, intent_sha, at_unix);
CREATE INDEX IF NOT EXISTS plan_history_caller_at ON plan_history (caller, at_unix);
CREATE INDEX IF NOT EXISTS plan_history_expires ON plan_history (expires_at);
