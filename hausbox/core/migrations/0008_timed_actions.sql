-- Armed timed actions (at most one per equipment): the action was sent, the revert is due at
-- expires_at (ms since epoch). Kept across restarts; a deadline passed meanwhile is honoured at start.
CREATE TABLE timed_actions (
    equipment_id TEXT PRIMARY KEY REFERENCES equipments(id) ON DELETE CASCADE,
    alias TEXT NOT NULL,                        -- the order binding's alias
    value TEXT,                                 -- the action's value (string or NULL)
    revert_value TEXT,                          -- sent at expiry (string or NULL)
    duration_ms INTEGER NOT NULL,               -- the current slot's duration (places it among steps)
    armed_at INTEGER NOT NULL,
    armed_by TEXT,                              -- user id
    expires_at INTEGER NOT NULL
);
