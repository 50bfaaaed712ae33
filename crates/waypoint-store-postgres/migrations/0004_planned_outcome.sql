-- Until this version every row was written when a plan was made and said `ok` whether or
-- not the plan ever ran. Planning alone is now `planned`; `ok`, `failed` and `limit`
-- come from runs, `accepted` from `waypoint plans accept` (docs/store.md).
UPDATE plan_history SET outcome = 'planned' WHERE outcome = 'ok';
