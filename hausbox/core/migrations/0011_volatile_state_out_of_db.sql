-- Device values, times, last-seen and status leave the database: they change many times a minute,
-- and rewriting them here every few minutes (rows, WAL frames, checkpoint) was most of what the
-- service wrote to the SD card. The device manager now keeps them in memory and writes them to the
-- snapshot file <data dir>/device-state.json.gz (hausbox/devices/snapshot.py).
--
-- A migration cannot write that file, so the last values stored here are handed over in two tables:
-- at its next start the device manager reads them, writes them into the snapshot, then drops both.
CREATE TABLE device_state_handover (
    device_id TEXT PRIMARY KEY,
    status TEXT,
    last_seen INTEGER
);
INSERT INTO device_state_handover (device_id, status, last_seen)
    SELECT id, status, last_seen FROM devices WHERE status <> 'unknown' OR last_seen IS NOT NULL;

CREATE TABLE datum_state_handover (
    device_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT,                                 -- JSON
    last_updated INTEGER,
    last_changed INTEGER,
    PRIMARY KEY (device_id, key)
);
INSERT INTO datum_state_handover (device_id, key, value, last_updated, last_changed)
    SELECT device_id, key, value, last_updated, last_changed FROM device_data
    WHERE value IS NOT NULL OR last_updated IS NOT NULL OR last_changed IS NOT NULL;

-- SQLite >= 3.35 (Debian bookworm has 3.40). The CHECK on status belongs to the column itself,
-- so DROP COLUMN accepts it and no table rebuild (with its foreign keys) is needed.
ALTER TABLE device_data DROP COLUMN value;
ALTER TABLE device_data DROP COLUMN last_updated;
ALTER TABLE device_data DROP COLUMN last_changed;
ALTER TABLE devices DROP COLUMN last_seen;
ALTER TABLE devices DROP COLUMN status;
