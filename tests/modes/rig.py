"""An in-process engine for the orchestration tests (modes, calendar, button actions).

The engine runs on a ``ManualClock`` in Europe/Paris, with the fake integration of
``tests/inprocess.py``: lights that echo their orders back, buttons whose presses are reported as
``action`` data. A stub stands for the recipe service (``engine.recipes``) and records the calls.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import gevent

from hausbox.core.clock import ManualClock
from hausbox.core.errors import NotFound
from hausbox.devices.discovery import DataSpec
from tests.inprocess import Recorder, build_engine, light_specs

PARIS = ZoneInfo("Europe/Paris")
ROOT = "00000000-0000-0000-0000-000000000001"


def paris_ms(text: str) -> int:
    """``"2026-03-28 12:00"`` in Paris, as epoch milliseconds."""
    return int(datetime.fromisoformat(text).replace(tzinfo=PARIS).timestamp() * 1000)


class StubRecipes:
    """What modes and buttons need of the recipe service: enable, disable, update_params, get_instance."""

    def __init__(self, *instance_ids: str):
        self.instances: dict[str, dict[str, Any]] = {i: {"id": i, "enabled": True, "params": {}} for i in instance_ids}
        self.calls: list[tuple[str, str, Any]] = []
        self.fail: set[str] = set()

    def get_instance(self, instance_id: str) -> dict[str, Any]:
        if instance_id not in self.instances:
            raise NotFound(f"Recipe instance not found: {instance_id}")
        return self.instances[instance_id]

    def _call(self, name: str, instance_id: str, arg: Any = None) -> None:
        self.get_instance(instance_id)
        if instance_id in self.fail:
            raise RuntimeError(f"{name} of {instance_id} failed")
        self.calls.append((name, instance_id, arg))

    def enable(self, instance_id: str) -> None:
        self._call("enable", instance_id)
        self.instances[instance_id]["enabled"] = True

    def disable(self, instance_id: str) -> None:
        self._call("disable", instance_id)
        self.instances[instance_id]["enabled"] = False

    def update_params(self, instance_id: str, params: dict[str, Any]) -> None:
        self._call("update_params", instance_id, params)
        self.instances[instance_id]["params"] = params


class Rig:
    def __init__(self, data_dir: Path, start: str = "2026-03-28 12:00"):
        self.data_dir = data_dir
        self.clock = ManualClock(PARIS, paris_ms(start))
        self.recipes = StubRecipes("inst-1", "inst-2")
        self._boot()

    def _boot(self) -> None:
        self.engine, self.fake = build_engine(self.data_dir, clock=self.clock)
        self._real_recipes = self.engine.__dict__.get("recipes")
        self.engine.recipes = self.recipes
        self.recorder = Recorder(self.engine)
        self.engine.calendar.start()

    def restart(self) -> None:
        """Stop the engine and build a new one on the same data (same clock)."""
        self.stop()
        self._boot()

    def stop(self) -> None:
        if self._real_recipes is not None:
            self.engine.recipes = self._real_recipes
        else:
            del self.engine.recipes
        self.engine.stop()

    # ---- things in the home ----------------------------------------------------------------------
    def zone(self, name: str, parent: str | None = None) -> str:
        return self.engine.zones.create(name, parent)["id"]

    def light(self, name: str, zone_id: str = ROOT) -> dict[str, Any]:
        data, orders = light_specs()
        device = self.fake.discover(name, data, orders)
        return self.engine.equipments.create(name, "light_dimmable", zone_id, device_ids=[device.id])

    def button(self, name: str, zone_id: str = ROOT) -> dict[str, Any]:
        device = self.fake.discover(name, [DataSpec("action", "enum", "action", enum_values=["single", "double", "hold"]), DataSpec("battery", "number", "battery")])
        return self.engine.equipments.create(name, "button", zone_id, device_ids=[device.id])

    def press(self, name: str, value: Any) -> None:
        """The button reports ``action``; wait until the press has been handled."""
        self.fake.report(name, {"action": value})
        gevent.sleep(0)
        self.engine.button_actions.join(timeout=5)

    def mode(self, name: str) -> str:
        return self.engine.modes.create(name)["id"]

    # ---- what happened ---------------------------------------------------------------------------
    def sent(self) -> list[tuple[str, str, Any]]:
        return list(self.fake.sent)

    def of(self, event_type: str) -> list[dict[str, Any]]:
        return self.recorder.of(event_type)
