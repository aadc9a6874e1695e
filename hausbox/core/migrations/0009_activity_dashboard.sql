-- The activity feed, dashboard widgets and saved charts.

-- Activity items: kept 7 days and at most 2000 rows (pruned by the feed as it writes).
-- seq orders items written in the same millisecond; zone_id is not a foreign key, an item
-- outlives the zone it happened in.
CREATE TABLE activity_items (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    timestamp INTEGER NOT NULL,
    category TEXT NOT NULL CHECK (category IN ('order', 'motion', 'recipe', 'mode', 'sunlight', 'alarm')),
    zone_id TEXT,
    template TEXT NOT NULL,
    params TEXT NOT NULL DEFAULT '{}',          -- JSON object
    source TEXT                                 -- JSON object, orders only
);
CREATE INDEX activity_items_time ON activity_items(timestamp);

-- A widget goes with the equipment or zone it shows.
CREATE TABLE dashboard_widgets (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL CHECK (type IN ('equipment', 'zone')),
    label TEXT,
    icon TEXT,
    equipment_id TEXT REFERENCES equipments(id) ON DELETE CASCADE,
    zone_id TEXT REFERENCES zones(id) ON DELETE CASCADE,
    family TEXT CHECK (family IS NULL OR family IN ('lights', 'shutters', 'heating', 'sensors')),
    display_order INTEGER NOT NULL DEFAULT 0,
    config TEXT,                                -- JSON object or NULL
    created_at INTEGER NOT NULL,
    CHECK ((type = 'equipment' AND equipment_id IS NOT NULL) OR (type = 'zone' AND zone_id IS NOT NULL AND family IS NOT NULL))
);
CREATE INDEX dashboard_widgets_equipment ON dashboard_widgets(equipment_id);
CREATE INDEX dashboard_widgets_zone ON dashboard_widgets(zone_id);

CREATE TABLE chart_configs (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    config TEXT NOT NULL DEFAULT '{}',          -- JSON object
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
