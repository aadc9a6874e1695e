"""The integration registry: lifecycle, status events, settings-driven restarts, masked secrets."""

from __future__ import annotations

import gevent
import pytest

from hausbox.core.errors import BadRequest, NotFound, ServiceUnavailable
from tests.inprocess import FAKE_ID


def test_status_changes_are_announced_once(house):
    engine, fake, recorder = house.engine, house.fake, house.recorder
    registry = engine.integrations
    registry._status_reported(FAKE_ID, "connected", None)
    registry._status_reported(FAKE_ID, "connected", None)
    registry._status_reported(FAKE_ID, "error", "broker gone")
    assert [e["type"] for e in recorder.events if e["type"].startswith("system.integration")] == [
        "system.integration.connected",
        "system.integration.disconnected",
    ]


def test_start_stop_restart_and_refresh(house):
    engine, fake = house.engine, house.fake
    registry = engine.integrations
    assert registry.stop(FAKE_ID) == "disconnected"
    assert registry.start(FAKE_ID) == "connected"
    assert registry.restart(FAKE_ID) == "connected"
    with pytest.raises(BadRequest, match="does not poll"):
        registry.refresh(FAKE_ID)
    with pytest.raises(NotFound):
        registry.start("nope")


def test_settings_are_scoped_masked_and_restart_the_integration(house):
    engine, fake = house.engine, house.fake
    engine.integrations.start_all()
    engine.settings.set_many({"integration.fake.token": "s3cret-value", "integration.other.key": "x"})
    assert fake.context.settings.all() == {"token": "s3cret-value"}
    fake.connected = False
    gevent.sleep(0.05)  # the restart runs in the background
    assert fake.connected is True
    listed = next(i for i in engine.integrations.list_json() if i["id"] == FAKE_ID)
    assert listed["settingValues"] == {"token": "••••••••"}
    assert listed["status"] == "connected" and listed["deviceCount"] == 0


def test_a_disconnected_integration_refuses_orders(house):
    engine, fake = house.engine, house.fake
    from hausbox.devices.discovery import DataSpec, OrderSpec

    device = fake.discover("plug", [DataSpec("state", "enum")], [OrderSpec("state", "enum", enum_values=["ON", "OFF"])])
    fake.connected = False
    with pytest.raises(ServiceUnavailable):
        engine.integrations.dispatch_order(device, device.orders["state"], "ON")


def test_health_lists_every_integration_and_device_counts(house):
    engine, fake = house.engine, house.fake
    health = engine.health.report(detailed=True)
    assert health["integrations"][FAKE_ID] == {"status": "connected"}
    assert set(health["devices"]) == {"total", "online", "offline", "unknown"}


def test_a_plugin_of_the_older_order_api_gets_its_dispatch_config(house):
    from hausbox.devices.discovery import DataSpec, DiscoveredDevice, OrderSpec

    engine = house.engine
    calls = []

    class OldPlugin:
        id, name, description, icon, api_version = "old", "Old", "v1 plugin", "box", 1

        def __init__(self, context):
            self.context = context

        def settings_schema(self):
            return []

        def is_configured(self):
            return True

        def start(self):
            pass

        def stop(self):
            pass

        def status(self):
            return "connected"

        def execute_order(self, device, dispatch_config, value):
            calls.append((device.source_device_id, dispatch_config, value))

    plugin = engine.integrations.register({"id": "old", "name": "Old"}, OldPlugin)
    spec = OrderSpec("state", "enum", enum_values=["ON", "OFF"], dispatch_config={"topic": "relay/1", "payloadKey": "power"})
    device = plugin.context.devices.upsert_from_discovery("old", DiscoveredDevice("relay-1", data=[DataSpec("state", "enum")], orders=[spec]))
    engine.integrations.dispatch_order(device, device.orders["state"], "ON")
    assert calls == [("relay-1", {"topic": "relay/1", "payloadKey": "power"}, "ON")]
