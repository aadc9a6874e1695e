-- Calendar: built-in profiles (one active, named by the setting calendar.activeProfileId) and
-- their weekly slots, each switching modes on or off at a local wall time.
CREATE TABLE calendar_profiles (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    built_in INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);
INSERT INTO calendar_profiles (id, name, built_in, created_at) VALUES
    ('work', 'Work', 1, CAST(strftime('%s', 'now') AS INTEGER) * 1000),
    ('holidays', 'Holidays', 1, CAST(strftime('%s', 'now') AS INTEGER) * 1000);

CREATE TABLE calendar_slots (
    id TEXT PRIMARY KEY,
    profile_id TEXT NOT NULL REFERENCES calendar_profiles(id) ON DELETE CASCADE,
    days TEXT NOT NULL,                         -- JSON array of weekdays, 0 = Sunday .. 6 = Saturday
    time TEXT NOT NULL,                         -- "HH:MM", local wall time
    mode_actions TEXT NOT NULL DEFAULT '[]',    -- JSON array of {modeId, action: "on" | "off"}
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX calendar_slots_profile ON calendar_slots(profile_id);
