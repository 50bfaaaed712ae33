-- The run journal: one row per run, one per step call (written before and after it).
CREATE TABLE IF NOT EXISTS runs (
    run_id     TEXT    PRIMARY KEY,
    caller     TEXT    NOT NULL,
    status     TEXT    NOT NULL,
    plan       TEXT    NOT NULL,
    generation INTEGER NOT NULL,
    report     TEXT    NOT NULL,
    settings   TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_caller_created ON runs (caller, created_at);

CREATE TABLE IF NOT EXISTS run_steps (
    seq               INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id            TEXT    NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    key               TEXT    NOT NULL,
    tool              TEXT    NOT NULL,
    status            TEXT    NOT NULL,
    idempotency_key   TEXT    NOT NULL,
    output            TEXT    NOT NULL,
    error             TEXT,
    latency_ms        INTEGER NOT NULL,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost_usd          REAL    NOT NULL,
    started_at        INTEGER NOT NULL,
    finished_at       INTEGER,
    UNIQUE (run_id, key)
);

-- What memory_store / memory_recall / memory_forget keep, per caller.
CREATE TABLE IF NOT EXISTS memories (
    caller TEXT    NOT NULL,
    key    TEXT    NOT NULL,
    value  TEXT    NOT NULL,
    at_unix INTEGER NOT NULL,
    PRIMARY KEY (caller, key)
);
