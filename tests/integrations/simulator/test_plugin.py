"""The simulator integration against a recording fake of the plugin API's context (no server)."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gevent
import pytest

from hausbox.integrations.api import IntegrationContext
from hausbox.integrations.builtin import simulator
from hausbox.integrations.builtin.simulator.home import VirtualHome
from hausbox.sdk.manifest import builtin_manifests


class FakeDevices:
    """The plugin's device handle (``hausbox.sdk.DeviceHandle``), recording every call with its (monotonic) time."""

    def __init__(self) -> None:
        self.upserted: dict[str, Any] = {}
        self.updates: list[tuple[float, str, dict[str, Any]]] = []
        self.statuses: dict[str, str] = {}
        self.stale_calls: list[set[str]] = []

    def upsert_from_discovery(self, source: str, found: Any) -> Any:
        assert source == "simulator"
        self.upserted[found.source_device_id] = found
        return found

    def remove_stale(self, present: set[str]) -> int:
        self.stale_calls.append(set(present))
        return 0

    def update_data(self, source_device_id: str, payload: dict[str, Any], source_timestamp: str | None = None) -> None:
        assert source_device_id in self.upserted, "data for a device never discovered"
        self.updates.append((time.monotonic(), source_device_id, dict(payload)))

    def update_status(self, source_device_id: str, status: str) -> None:
        self.statuses[source_device_id] = status


class FakeSettings:
    def __init__(self, values: dict[str, Any]):
        self.values = values

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def all(self) -> dict[str, Any]:
        return dict(self.values)


@pytest.fixture
def make_plugin(tmp_path: Path):
    made = []

    def make(**settings: Any):
        devices = FakeDevices()
        reported: list[tuple[str, str | None]] = []
        context = IntegrationContext(
            integration_id="simulator",
            logger=logging.getLogger("hausbox.plugin:simulator"),
            bus=None,  # type: ignore[arg-type]  (the simulator does not use the bus)
            settings=FakeSettings(settings),  # type: ignore[arg-type]
            devices=devices,  # type: ignore[arg-type]
            data_dir=tmp_path,
            report_status=lambda status, detail=None: reported.append((status, detail)),
        )
        plugin = simulator.create(context)
        made.append(plugin)
        return plugin, devices, reported

    yield make
    for plugin in made:
        plugin.stop()


def wait_until(predicate, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        gevent.sleep(0.01)


def started(make_plugin, **settings: Any):
    plugin, devices, reported = make_plugin(enabled=True, **settings)
    plugin.start()
    wait_until(lambda: plugin.status() == "connected")
    return plugin, devices, reported


def test_the_manifest_is_found_and_the_plugin_declares_itself(make_plugin):
    manifests = dict(builtin_manifests("hausbox.integrations.builtin", "integration"))
    manifest = manifests["hausbox.integrations.builtin.simulator"]
    assert manifest["id"] == "simulator" and manifest["apiVersion"] == 2 and manifest["type"] == "integration"
    plugin, _, _ = make_plugin()
    assert (plugin.id, plugin.api_version) == ("simulator", 2)
    assert {s.key for s in plugin.settings_schema()} == {"enabled", "rooms", "message_rate", "seed"}
    assert next(s for s in plugin.settings_schema() if s.key == "enabled").type == "boolean"


@pytest.mark.parametrize("value, configured", [(None, False), (False, False), (True, True), ("true", True), ("no", False), (1, True)])
def test_it_is_configured_only_when_enabled(make_plugin, value, configured):
    plugin, _, _ = make_plugin(enabled=value)
    assert plugin.is_configured() is configured


def test_start_discovers_everything_marks_it_online_and_publishes_first_values(make_plugin):
    plugin, devices, reported = started(make_plugin, rooms=3, seed=5, message_rate=0)
    expected = VirtualHome(rooms=3, seed=5)
    assert set(devices.upserted) == set(expected.devices)
    assert devices.stale_calls == [set(expected.devices)]
    assert set(devices.statuses.values()) == {"online"} and set(devices.statuses) == set(expected.devices)
    first = {source_id for _, source_id, _ in devices.updates}
    assert first == set(expected.devices)
    assert ("connected", None) in reported
    gevent.sleep(0.3)
    assert len(devices.updates) == len(expected.devices), "message_rate 0: nothing spontaneous"


def test_an_order_is_answered_50_to_300_ms_later(make_plugin):
    plugin, devices, _ = started(make_plugin, message_rate=0)
    device = SimpleNamespace(source_device_id="sim-salon-light-1")
    for value in ("OFF", "ON"):
        mark = len(devices.updates)
        sent = time.monotonic()
        plugin.execute_order(device, "state", value)
        wait_until(lambda: len(devices.updates) > mark)
        at, source_id, payload = devices.updates[mark]
        assert source_id == "sim-salon-light-1" and payload["state"] == value
        assert (payload["power"] > 0) is (value == "ON")
        assert 0.04 <= at - sent <= 0.4, f"answered after {at - sent:.3f} s"


def test_a_bad_order_raises_value_error_and_changes_nothing(make_plugin):
    plugin, devices, _ = started(make_plugin, message_rate=0)
    mark = len(devices.updates)
    with pytest.raises(ValueError):
        plugin.execute_order(SimpleNamespace(source_device_id="sim-salon-light-1"), "colour", "red")
    with pytest.raises(ValueError):
        plugin.execute_order(SimpleNamespace(source_device_id="sim-salon-dimmer-1"), "brightness", 999)
    with pytest.raises(ValueError):
        plugin.execute_order(SimpleNamespace(source_device_id="sim-unknown"), "state", "ON")
    gevent.sleep(0.4)
    assert len(devices.updates) == mark


# 2000/s at most: in process, on a loaded 2-core CI machine, 4000/s measured the machine (a 1 s sleep
# took 1.3 s once) rather than the pacing; the bench measures throughput.
@pytest.mark.parametrize("rate", [20, 200, 2000])
def test_the_loop_keeps_to_message_rate(make_plugin, rate):
    plugin, devices, _ = started(make_plugin, rooms=6, message_rate=rate)
    gevent.sleep(0.2)
    mark, begin = len(devices.updates), time.monotonic()
    gevent.sleep(1.0)
    count = len(devices.updates) - mark
    elapsed = time.monotonic() - begin
    assert rate * elapsed * 0.85 <= count <= rate * elapsed * 1.15 + 2, f"{count} messages in {elapsed:.2f} s at {rate}/s"


def test_stop_ends_every_greenlet_marks_devices_offline_and_start_again_works(make_plugin):
    plugin, devices, reported = started(make_plugin, message_rate=100)
    plugin.execute_order(SimpleNamespace(source_device_id="sim-salon-shutter-1"), "position", 50)
    plugin.stop()
    assert plugin.status() == "disconnected" and reported[-1] == ("disconnected", None)
    assert len(plugin._group) == 0
    assert set(devices.statuses.values()) == {"offline"}
    mark = len(devices.updates)
    gevent.sleep(0.6)
    assert len(devices.updates) == mark, "nothing may be sent after stop"
    with pytest.raises(RuntimeError):
        plugin.execute_order(SimpleNamespace(source_device_id="sim-salon-light-1"), "state", "ON")
    plugin.start()
    wait_until(lambda: plugin.status() == "connected")
    assert set(devices.statuses.values()) == {"online"}
    wait_until(lambda: len(devices.updates) > mark + 40)


def test_bad_settings_are_an_error_with_a_reason(make_plugin):
    plugin, _, reported = make_plugin(enabled=True, rooms="many")
    with pytest.raises(ValueError, match="rooms"):
        plugin.start()
    assert plugin.status() == "error" and "rooms" in plugin.status_detail()
    plugin, _, _ = make_plugin(enabled=True, message_rate=-5)
    with pytest.raises(ValueError, match="message_rate"):
        plugin.start()
