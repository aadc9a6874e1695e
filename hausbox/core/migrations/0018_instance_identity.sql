-- Which deployment this database belongs to (spec, States: Instance identity). The running
-- deployment's id lives in <data dir>/instance.json, never in a backup; a database restored from
-- another box carries that box's id here, and the engine stays inert until the takeover.
CREATE TABLE instance_identity (
    slot INTEGER PRIMARY KEY CHECK (slot = 1),
    instance_id TEXT NOT NULL,
    claimed_at INTEGER NOT NULL
);
