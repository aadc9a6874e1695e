-- An order may say more of its value than its type, range and enum values: the fields of an object
-- (a zigbee2mqtt composite such as a light's level_config), the items of a list, the format of a
-- text. That is a JSON Schema, checked before the order is sent (hausbox/equipments/orders.py).
-- Existing orders have none until their integration describes its devices again.
ALTER TABLE device_orders ADD COLUMN value_schema TEXT;   -- JSON Schema, or NULL
