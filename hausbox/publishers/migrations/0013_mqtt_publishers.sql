-- MQTT brokers and the publishers that send house values to them (one topic each, mappings from
-- equipment, zone and recipe sources). A broker's password is kept as typed: the client needs it.
CREATE TABLE mqtt_brokers (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    url TEXT NOT NULL,
    username TEXT,
    password TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE mqtt_publishers (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    broker_id TEXT NOT NULL REFERENCES mqtt_brokers(id),   -- no cascade: a used broker is not deleted (409)
    topic TEXT NOT NULL,
    enabled INTEGER NOT NULL DEFAULT 1,
    on_change_only INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX mqtt_publishers_broker ON mqtt_publishers(broker_id);

CREATE TABLE mqtt_publisher_mappings (
    id TEXT PRIMARY KEY,
    publisher_id TEXT NOT NULL REFERENCES mqtt_publishers(id) ON DELETE CASCADE,
    publish_key TEXT NOT NULL,
    source_type TEXT NOT NULL CHECK (source_type IN ('equipment', 'zone', 'recipe')),
    source_id TEXT NOT NULL,
    source_key TEXT NOT NULL,
    enabled INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL,
    UNIQUE (publisher_id, publish_key)
);
