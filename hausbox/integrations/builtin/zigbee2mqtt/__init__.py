"""Built-in integration: Zigbee devices through a zigbee2mqtt bridge on an MQTT broker.

- ``exposes``: a device's exposes flattened into data and orders (types, categories, enums);
- ``bridge``: a ``bridge/devices`` entry turned into a discovered device (skip rules, identity);
- ``topics``: which message a topic under the base topic is (state, availability, bridge ...);
- ``connection``: the MQTT client in its own greenlet, with reconnection and backoff;
- ``plugin``: the integration object the registry drives, through the plugin API only.
"""

from hausbox.integrations.builtin.zigbee2mqtt.plugin import (
    Zigbee2MqttIntegration,
    create,
)

__all__ = ["Zigbee2MqttIntegration", "create"]
