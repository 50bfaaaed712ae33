-- The run journal: one row per run, one per step call (written before and after it).
CREATE TABLE IF NOT EXISTS runs (
    run_id     TEXT    PRIMARY KEY,
    caller     TEXT    NOT NULL,
    status     TEXT    NOT NULL,
    plan       TEXT    NOT NULL,
    generation BIGINT  NOT NULL,
    report     TEXT    NOT NULL,
    settings   TEXT    NOT NULL,
    created_at BIGINT  NOT NULL,
    updated_at BIGINT  NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_caller_created ON runs (caller, created_at);

CREATE TABLE IF NOT EXISTS run_steps (
    seq               BIGSERIAL PRIMARY KEY,
    run_id            TEXT    NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    key               TEXT    NOT NULL,
    tool              TEXT    NOT NULL,
    status            TEXT    NOT NULL,
    idempotency_key   TEXT    NOT NULL,
    output            TEXT    NOT NULL,
    error             TEXT,
    latency_ms        BIGINT  NOT NULL,
    prompt_tokens     BIGINT  NOT NULL,
    completion_tokens BIGINT  NOT NULL,
    cost_usd          DOUBLE PRECISION NOT NULL,
    started_at        BIGINT  NOT NULL,
    finished_at       BIGINT,
    UNIQUE (run_id, key)
);

-- What memory_store / memory_recall / memory_forget keep, per caller.
CREATE TABLE IF NOT EXISTS memories (
    caller TEXT    NOT NULL,
    key    TEXT    NOT NULL,
    value  TEXT    NOT NULL,
    at_unix BIGINT  NOT NULL,
    PRIMARY KEY (caller, key)
);
