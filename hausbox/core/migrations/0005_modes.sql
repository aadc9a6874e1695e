-- Modes (named home states, several may be active) and their impacts, one list of actions per zone.
CREATE TABLE modes (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    icon TEXT,
    description TEXT,
    active INTEGER NOT NULL DEFAULT 0,          -- runtime state, kept across restarts
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE zone_mode_impacts (
    id TEXT PRIMARY KEY,
    mode_id TEXT NOT NULL REFERENCES modes(id) ON DELETE CASCADE,
    zone_id TEXT NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
    actions TEXT NOT NULL DEFAULT '[]',         -- JSON array of impact actions, applied in order
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (mode_id, zone_id)
);
CREATE INDEX zone_mode_impacts_zone ON zone_mode_impacts(zone_id);
