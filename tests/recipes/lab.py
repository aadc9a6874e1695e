"""An in-process home for recipe tests: an Engine on a ManualClock (Europe/Paris) with fake devices.

Devices come from the fake integration (``tests/inprocess.py``): a report goes through the real
pipeline (device -> equipment -> zone aggregation -> recipes); an order a recipe sends lands in
``fake.sent`` and, like a real device, the fake reports the new value back (the echo).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from hausbox.core.clock import ManualClock
from hausbox.devices.discovery import DataSpec, OrderSpec
from tests.inprocess import Recorder, build_engine, light_specs

PARIS = ZoneInfo("Europe/Paris")


def paris_ms(text: str) -> int:
    """``"2026-06-15 08:00"`` (local time in Paris) -> epoch milliseconds."""
    return int(datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=PARIS).timestamp() * 1000)


class Lab:
    def __init__(self, data_dir: Path, start: str = "2026-06-15 08:00", clock: ManualClock | None = None):
        self.data_dir = data_dir
        self.clock = clock or ManualClock(PARIS, paris_ms(start))
        self.engine, self.fake = build_engine(data_dir, clock=self.clock)
        self.recorder = Recorder(self.engine)
        self.recipes = self.engine.recipes
        root = self.engine.zones.root().id
        existing = [z for z in self.engine.zones.all() if z.name == "Living"]
        self.zone_id = existing[0].id if existing else self.engine.zones.create("Living", root)["id"]
        self.stopped = False

    # ---- devices and equipments ---------------------------------------------------------------
    def _equipment(self, name: str, kind: str, device: Any, zone_id: str | None = None) -> str:
        found = [e for e in self.engine.equipments.all() if e.name == name]
        if found:
            return found[0].id
        return self.engine.equipments.create(name, kind, zone_id or self.zone_id, device_ids=[device.id])["id"]

    def light(self, name: str = "lamp", kind: str = "light_dimmable", zone_id: str | None = None) -> str:
        data, orders = light_specs()
        return self._equipment(name, kind, self.fake.discover(name, data, orders), zone_id)

    def relay(self, name: str, kind: str = "switch") -> str:
        device = self.fake.discover(name, [DataSpec("state", "enum", "generic", enum_values=["ON", "OFF"])], [OrderSpec("state", "enum", None, enum_values=["ON", "OFF", "TOGGLE"])])
        return self._equipment(name, kind, device)

    def motion_sensor(self, name: str = "pir", zone_id: str | None = None) -> str:
        device = self.fake.discover(name, [DataSpec("occupancy", "boolean", "motion"), DataSpec("illuminance", "number", "luminosity", "lx")])
        return self._equipment(name, "sensor", device, zone_id)

    def button(self, name: str = "button") -> str:
        return self._equipment(name, "button", self.fake.discover(name, [DataSpec("action", "text", "action")]))

    def contact(self, name: str = "door") -> str:
        return self._equipment(name, "sensor", self.fake.discover(name, [DataSpec("contact", "boolean", "contact_door")]))

    def thermostat(self, name: str = "trv") -> str:
        device = self.fake.discover(
            name,
            [DataSpec("local_temperature", "number", "temperature", "°C"), DataSpec("occupied_heating_setpoint", "number", "setpoint", "°C")],
            [OrderSpec("occupied_heating_setpoint", "number", "set_setpoint", min=5, max=30, unit="°C")],
        )
        return self._equipment(name, "thermostat", device)

    # ---- what happens -------------------------------------------------------------------------------
    def report(self, source: str, **payload: Any) -> None:
        """One device message, then a turn of the loop (what is due "now" runs, as it would live)."""
        self.fake.report(source, payload)
        self.clock.advance(0)

    def motion(self, on: bool, source: str = "pir", **extra: Any) -> None:
        self.report(source, occupancy=on, **extra)

    def press(self, source: str = "button", action: str = "single") -> None:
        self.report(source, action=action)

    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)

    def advance_to(self, local: str) -> None:
        self.clock.set(paris_ms(local))

    def sent(self, key: str | None = None) -> list[tuple[str, str, Any]]:
        return [s for s in self.fake.sent if key is None or s[1] == key]

    def clear(self) -> None:
        self.fake.sent.clear()
        self.recorder.clear()

    # ---- recipes -----------------------------------------------------------------------------------
    def create(self, recipe_id: str, **params: Any) -> str:
        return self.recipes.create(recipe_id, params)["id"]

    def state(self, instance_id: str) -> dict[str, Any]:
        return self.recipes.get_instance(instance_id)["state"]

    def log(self, instance_id: str) -> list[str]:
        return [e["message"] for e in self.recipes.log_entries(instance_id, 1000)]

    def events(self, event_type: str) -> list[dict[str, Any]]:
        return self.recorder.of(event_type)

    def stop(self) -> None:
        if not self.stopped:
            self.stopped = True
            self.engine.stop()
