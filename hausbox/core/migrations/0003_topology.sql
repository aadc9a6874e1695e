-- Zones, devices (with their data and orders), equipments and their bindings.
CREATE TABLE zones (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    parent_id TEXT REFERENCES zones(id) ON DELETE RESTRICT,
    icon TEXT,
    description TEXT,
    display_order INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX zones_parent ON zones(parent_id);

CREATE TABLE devices (
    id TEXT PRIMARY KEY,
    integration_id TEXT NOT NULL,
    source_device_id TEXT NOT NULL,             -- the integration's own name (z2m friendly_name)
    name TEXT NOT NULL,
    name_customised INTEGER NOT NULL DEFAULT 0, -- a user rename survives rediscovery
    manufacturer TEXT,
    model TEXT,
    ieee_address TEXT,
    zone_id TEXT REFERENCES zones(id) ON DELETE SET NULL,
    source TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'unknown' CHECK (status IN ('online', 'offline', 'unknown')),
    power_source TEXT,
    last_seen INTEGER,
    raw_expose TEXT,                            -- JSON
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (integration_id, source_device_id)
);

CREATE TABLE device_data (
    id TEXT PRIMARY KEY,                        -- sha256("<deviceId>:data:<key>"): stable across rediscovery
    device_id TEXT NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    type TEXT NOT NULL,
    category TEXT NOT NULL DEFAULT 'generic',
    unit TEXT,
    enum_values TEXT,                           -- JSON array
    value TEXT,                                 -- JSON
    last_updated INTEGER,
    last_changed INTEGER,
    UNIQUE (device_id, key)
);

CREATE TABLE device_orders (
    id TEXT PRIMARY KEY,                        -- sha256("<deviceId>:order:<key>")
    device_id TEXT NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    type TEXT NOT NULL,
    category TEXT,
    min_value REAL,
    max_value REAL,
    enum_values TEXT,                           -- JSON array
    unit TEXT,
    dispatch_config TEXT NOT NULL DEFAULT '{}', -- JSON, for plugins of the older order signature
    UNIQUE (device_id, key)
);

CREATE TABLE equipments (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    zone_id TEXT NOT NULL REFERENCES zones(id) ON DELETE RESTRICT,
    icon TEXT,
    description TEXT,
    enabled INTEGER NOT NULL DEFAULT 1,
    separate_supply INTEGER NOT NULL DEFAULT 0,
    require_confirmation INTEGER NOT NULL DEFAULT 0,
    timed_command TEXT,                         -- JSON object or NULL
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX equipments_zone ON equipments(zone_id);

CREATE TABLE data_bindings (
    id TEXT PRIMARY KEY,
    equipment_id TEXT NOT NULL REFERENCES equipments(id) ON DELETE CASCADE,
    device_data_id TEXT NOT NULL REFERENCES device_data(id) ON DELETE CASCADE,
    alias TEXT NOT NULL,
    historize INTEGER,
    UNIQUE (equipment_id, alias)
);
CREATE INDEX data_bindings_datum ON data_bindings(device_data_id);

CREATE TABLE order_bindings (
    id TEXT PRIMARY KEY,
    equipment_id TEXT NOT NULL REFERENCES equipments(id) ON DELETE CASCADE,
    device_order_id TEXT NOT NULL REFERENCES device_orders(id) ON DELETE CASCADE,
    alias TEXT NOT NULL,
    category_override TEXT,
    UNIQUE (equipment_id, alias)
);
CREATE INDEX order_bindings_order ON order_bindings(device_order_id);

-- Low-battery alerts: raised at <= 20 %, resolved at >= 25 %, reminded weekly while low.
CREATE TABLE battery_alerts (
    device_id TEXT PRIMARY KEY REFERENCES devices(id) ON DELETE CASCADE,
    level REAL NOT NULL,
    raised_at INTEGER NOT NULL,
    reminded_at INTEGER NOT NULL
);
