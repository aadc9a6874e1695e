-- Recipe instances, their persisted state and their execution log.
CREATE TABLE recipe_instances (
    id TEXT PRIMARY KEY,
    recipe_id TEXT NOT NULL,
    params TEXT NOT NULL DEFAULT '{}',          -- JSON object, as the user gave it (defaults not filled in)
    enabled INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE recipe_state (
    instance_id TEXT NOT NULL REFERENCES recipe_instances(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT,                                 -- JSON
    PRIMARY KEY (instance_id, key)
);

CREATE TABLE recipe_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    instance_id TEXT NOT NULL REFERENCES recipe_instances(id) ON DELETE CASCADE,
    timestamp INTEGER NOT NULL,
    message TEXT NOT NULL,
    level TEXT NOT NULL DEFAULT 'info' CHECK (level IN ('info', 'warn', 'error'))
);
CREATE INDEX recipe_log_instance ON recipe_log(instance_id, id DESC);
