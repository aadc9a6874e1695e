-- Button action bindings: what a press (a value of the equipment's "action" alias) does.
CREATE TABLE button_action_bindings (
    id TEXT PRIMARY KEY,
    equipment_id TEXT NOT NULL REFERENCES equipments(id) ON DELETE CASCADE,
    action_value TEXT NOT NULL,                 -- matched exactly against the pressed value
    effect_type TEXT NOT NULL,
    config TEXT NOT NULL DEFAULT '{}',          -- JSON object, shape by effect_type
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX button_action_bindings_equipment ON button_action_bindings(equipment_id);
