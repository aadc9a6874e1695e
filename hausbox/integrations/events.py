"""The events of the integration registry, with their payloads."""

from typing import TypedDict

INTEGRATION_CONNECTED = "system.integration.connected"
INTEGRATION_DISCONNECTED = "system.integration.disconnected"


class IntegrationEvent(TypedDict):
    integrationId: str


EVENTS = {INTEGRATION_CONNECTED: IntegrationEvent, INTEGRATION_DISCONNECTED: IntegrationEvent}
