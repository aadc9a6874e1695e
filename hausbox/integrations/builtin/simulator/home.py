"""The virtual home: its devices, their state, and how that state evolves.

Nothing here sleeps, spawns or does I/O: every method that depends on time takes ``now`` (wall-clock
seconds), so the model can be driven by the integration's greenlets or by a unit test alike.

The layout (how many lights per room, which appliance sits on which plug, starting values) comes
from the seed: the same ``(rooms, seed)`` always builds the same home with the same source ids.

Each device knows:

- ``discovered()``: what it tells the device manager at discovery (data, orders, categories, units);
- ``state(now)``: its full report, like the JSON object a zigbee device publishes;
- ``report(now)`` (devices in the periodic rotation only): the next spontaneous message, in which at
  least one value differs from the last one (a sensor that has nothing new says ``None``);
- ``apply(key, value, now)``: an order; ``ValueError`` for an unknown key or a bad value;
- ``progress(now)`` (while ``moving``): the report of a shutter or gate on its way, else ``None``.
"""

from __future__ import annotations

import hashlib
import math
import random
import time
from typing import Any, Iterable

from hausbox.sdk import DataSpec, DiscoveredDevice, OrderSpec

MANUFACTURER = "Hausbox"
SHUTTER_TRAVEL_S = 6.0  # a full 0 -> 100 travel
GATE_TRAVEL_S = 3.0
ON_OFF = ["ON", "OFF"]
ON_OFF_TOGGLE = ["ON", "OFF", "TOGGLE"]

ROOMS: list[tuple[str, str]] = [
    ("salon", "Salon"),
    ("cuisine", "Cuisine"),
    ("chambre", "Chambre"),
    ("bureau", "Bureau"),
    ("salle-de-bain", "Salle de bain"),
    ("entree", "Entrée"),
    ("chambre-2", "Chambre 2"),
    ("garage", "Garage"),
    ("buanderie", "Buanderie"),
    ("chambre-3", "Chambre 3"),
]

# What a smart plug may have on it: (name, typical draw in W).
APPLIANCES: list[tuple[str, float]] = [
    ("Coffee machine", 1100.0),
    ("Television", 95.0),
    ("Desk", 65.0),
    ("Kettle", 2000.0),
    ("Washing machine", 650.0),
    ("Fridge", 120.0),
    ("Heater", 1500.0),
    ("Computer", 180.0),
    ("Dehumidifier", 280.0),
]


def room_list(count: int) -> list[tuple[str, str]]:
    rooms = ROOMS[:count]
    rooms += [(f"room-{n}", f"Room {n}") for n in range(len(rooms) + 1, count + 1)]
    return rooms


# ---- value checks (an order with a bad value is refused with ValueError) ----------------------


def enum_value(value: Any, allowed: Iterable[str]) -> str:
    """The allowed value matching ``value`` (case-insensitively); ValueError otherwise."""
    allowed = list(allowed)
    if isinstance(value, str):
        wanted = value.strip().lower()
        for candidate in allowed:
            if candidate.lower() == wanted:
                return candidate
    raise ValueError(f"value must be one of {', '.join(allowed)} (got {value!r})")


def number_value(value: Any, low: float, high: float) -> float:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ValueError(f"value must be a number (got {value!r})") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ValueError(f"value must be a number (got {value!r})")
    if not low <= value <= high:
        raise ValueError(f"value must be between {low:g} and {high:g} (got {value!r})")
    return float(value)


def switch_value(current: bool, value: Any) -> bool:
    """ON / OFF / TOGGLE (or a boolean) applied to the current on-state."""
    if isinstance(value, bool):
        return value
    choice = enum_value(value, ON_OFF_TOGGLE)
    return (not current) if choice == "TOGGLE" else choice == "ON"


def daylight(now: float) -> float:
    """0 at night, up to 1 at solar noon (local time): a plain sine from 06:30 to 19:30."""
    local = time.localtime(now)
    hour = local.tm_hour + local.tm_min / 60 + local.tm_sec / 3600
    return max(0.0, math.sin(math.pi * (hour - 6.5) / 13.0))


class Walk:
    """A bounded random walk in integer steps (tenths, say) that moves every time it is read."""

    __slots__ = ("value", "low", "high", "pull_to", "rng")

    def __init__(self, rng: random.Random, value: int, low: int, high: int, pull_to: int | None = None):
        self.rng, self.value, self.low, self.high = rng, value, low, high
        self.pull_to = value if pull_to is None else pull_to

    def step(self, size: int = 1) -> int:
        # Biased towards pull_to, never zero: every report carries a new value.
        up = 0.5 + max(-0.3, min(0.3, (self.pull_to - self.value) / (4.0 * (self.high - self.low) or 1)))
        delta = size if self.rng.random() < up else -size
        if not self.low <= self.value + delta <= self.high:
            delta = -delta
        self.value += delta
        return self.value


class Battery:
    """A battery level that drains linearly with time (a few percent a day at most)."""

    __slots__ = ("start", "since", "per_hour")

    def __init__(self, rng: random.Random, now: float):
        self.start = rng.randint(35, 100)
        self.per_hour = rng.uniform(0.05, 0.4)
        self.since = now

    def level(self, now: float) -> int:
        return max(1, int(round(self.start - (now - self.since) / 3600.0 * self.per_hour)))


class Meter:
    """Energy (kWh) integrated from power over time."""

    __slots__ = ("kwh", "since")

    def __init__(self, kwh: float, now: float):
        self.kwh, self.since = kwh, now

    def integrate(self, watts: float, now: float) -> float:
        elapsed = now - self.since
        if elapsed > 0:
            self.kwh += watts * elapsed / 3_600_000.0
            self.since = now
        return round(self.kwh, 4)


# ---- devices --------------------------------------------------------------------------------


class SimDevice:
    kind = "device"
    model = "Virtual device"
    power_source = "mains"
    in_rotation = False  # sends spontaneous periodic reports
    consumer = False  # counted by the main meter

    def __init__(self, source_id: str, name: str, rng: random.Random, room: str | None = None):
        self.source_id, self.name, self.rng, self.room = source_id, name, rng, room
        self.moving = False

    # what the device declares
    def data_specs(self) -> list[DataSpec]:
        return []

    def order_specs(self) -> list[OrderSpec]:
        return []

    def discovered(self) -> DiscoveredDevice:
        digest = hashlib.sha256(self.source_id.encode("utf-8")).hexdigest()
        data, orders = self.data_specs(), self.order_specs()
        return DiscoveredDevice(
            source_device_id=self.source_id,
            name=self.name,
            manufacturer=MANUFACTURER,
            model=self.model,
            ieee_address="0x" + digest[:16],
            power_source=self.power_source,
            data=data,
            orders=orders,
            raw_expose={
                "simulated": True,
                "kind": self.kind,
                "room": self.room,
                "data": [{"key": d.key, "type": d.type, "category": d.category, "unit": d.unit, "values": d.enum_values} for d in data],
                "orders": [{"key": o.key, "type": o.type, "category": o.category, "min": o.min, "max": o.max, "unit": o.unit, "values": o.enum_values} for o in orders],
            },
        )

    # what it does
    def state(self, now: float) -> dict[str, Any]:
        return {}

    def report(self, now: float) -> dict[str, Any] | None:
        return None

    def apply(self, key: str, value: Any, now: float) -> None:
        raise ValueError(f"{self.name} has no order {key!r}")

    def progress(self, now: float) -> dict[str, Any] | None:
        return None

    def power(self, now: float) -> float:
        return 0.0

    def unknown(self, key: str) -> ValueError:
        return ValueError(f"{self.name} has no order {key!r}")


class Light(SimDevice):
    kind, model, consumer = "light", "Virtual on/off light", True

    def __init__(self, source_id: str, name: str, rng: random.Random, room: str | None):
        super().__init__(source_id, name, rng, room)
        self.rated = float(rng.choice((5, 7, 9, 12, 18, 40, 60)))
        self.on = rng.random() < 0.3

    def data_specs(self) -> list[DataSpec]:
        return [DataSpec("state", "enum", "light_state", enum_values=ON_OFF), DataSpec("power", "number", "power", "W")]

    def order_specs(self) -> list[OrderSpec]:
        return [OrderSpec("state", "enum", "light_toggle", enum_values=ON_OFF_TOGGLE)]

    def power(self, now: float) -> float:
        return self.rated if self.on else 0.0

    def state(self, now: float) -> dict[str, Any]:
        return {"state": "ON" if self.on else "OFF", "power": round(self.power(now), 1)}

    def apply(self, key: str, value: Any, now: float) -> None:
        if key != "state":
            raise self.unknown(key)
        self.on = switch_value(self.on, value)


class Dimmer(SimDevice):
    kind, model, consumer = "dimmer", "Virtual dimmable light", True

    def __init__(self, source_id: str, name: str, rng: random.Random, room: str | None):
        super().__init__(source_id, name, rng, room)
        self.rated = float(rng.choice((8, 12, 25, 40)))
        self.on = rng.random() < 0.3
        self.brightness = rng.randint(40, 254)

    def data_specs(self) -> list[DataSpec]:
        return [
            DataSpec("state", "enum", "light_state", enum_values=ON_OFF),
            DataSpec("brightness", "number", "light_brightness"),
            DataSpec("power", "number", "power", "W"),
        ]

    def order_specs(self) -> list[OrderSpec]:
        return [
            OrderSpec("state", "enum", "light_toggle", enum_values=ON_OFF_TOGGLE),
            OrderSpec("brightness", "number", "set_brightness", min=0, max=254),
        ]

    def power(self, now: float) -> float:
        return max(1.0, self.rated * self.brightness / 254.0) if self.on else 0.0

    def state(self, now: float) -> dict[str, Any]:
        return {"state": "ON" if self.on else "OFF", "brightness": self.brightness, "power": round(self.power(now), 1)}

    def apply(self, key: str, value: Any, now: float) -> None:
        if key == "state":
            self.on = switch_value(self.on, value)
            if self.on and self.brightness == 0:
                self.brightness = 254
        elif key == "brightness":
            level = int(round(number_value(value, 0, 254)))
            self.on = level > 0  # like a zigbee bulb: a level turns it on, 0 turns it off
            if level > 0:
                self.brightness = level
        else:
            raise self.unknown(key)


class Shutter(SimDevice):
    kind, model = "shutter", "Virtual roller shutter"
    MOVES = ["OPEN", "CLOSE", "STOP"]

    def __init__(self, source_id: str, name: str, rng: random.Random, room: str | None):
        super().__init__(source_id, name, rng, room)
        self.position = float(rng.choice((0, 100, 100, rng.randint(10, 90))))
        self.command = "OPEN" if self.position > 0 else "CLOSE"
        self.target = self.position
        self.started_at, self.started_from = 0.0, self.position

    def data_specs(self) -> list[DataSpec]:
        return [
            DataSpec("state", "enum", "generic", enum_values=self.MOVES),
            DataSpec("position", "number", "shutter_position", "%"),
        ]

    def order_specs(self) -> list[OrderSpec]:
        return [
            OrderSpec("state", "enum", "shutter_move", enum_values=self.MOVES),
            OrderSpec("position", "number", "set_shutter_position", min=0, max=100, unit="%"),
        ]

    def position_at(self, now: float) -> float:
        if not self.moving:
            return self.position
        travelled = (now - self.started_at) * 100.0 / SHUTTER_TRAVEL_S
        if self.target >= self.started_from:
            return min(self.target, self.started_from + travelled)
        return max(self.target, self.started_from - travelled)

    def state(self, now: float) -> dict[str, Any]:
        return {"state": self.command, "position": int(round(self.position_at(now)))}

    def _move_to(self, target: float, now: float) -> None:
        self.position = self.position_at(now)
        self.target, self.started_at, self.started_from = target, now, self.position
        self.moving = target != self.position
        if target != self.position:
            self.command = "OPEN" if target > self.position else "CLOSE"

    def apply(self, key: str, value: Any, now: float) -> None:
        if key == "state":
            move = enum_value(value, self.MOVES)
            if move == "STOP":
                self.position = self.target = self.position_at(now)
                self.moving, self.command = False, "STOP"
            else:
                self._move_to(100.0 if move == "OPEN" else 0.0, now)
        elif key == "position":
            self._move_to(float(round(number_value(value, 0, 100))), now)
        else:
            raise self.unknown(key)

    def progress(self, now: float) -> dict[str, Any] | None:
        if not self.moving:
            return None
        position = self.position_at(now)
        if position == self.target:
            self.position, self.moving = position, False
            self.command = "CLOSE" if position <= 0 else "OPEN"
        return {"state": self.command, "position": int(round(position))}

    def openness(self, now: float) -> float:
        return self.position_at(now) / 100.0


class MotionSensor(SimDevice):
    kind, model, power_source, in_rotation = "motion", "Virtual motion sensor", "battery", True

    def __init__(self, source_id: str, name: str, rng: random.Random, room: str | None, now: float, home: "VirtualHome"):
        super().__init__(source_id, name, rng, room)
        self.battery = Battery(rng, now)
        self.occupied = False
        self.home = home

    def data_specs(self) -> list[DataSpec]:
        return [
            DataSpec("occupancy", "boolean", "motion"),
            DataSpec("illuminance", "number", "luminosity", "lx"),
            DataSpec("battery", "number", "battery", "%"),
        ]

    def illuminance(self, now: float) -> int:
        outdoor = 600.0 * daylight(now) * self.home.openness(self.room, now)
        artificial = 180.0 if self.home.lights_on(self.room) else 0.0
        return max(0, int(outdoor + artificial + self.rng.uniform(-8, 8)))

    def state(self, now: float) -> dict[str, Any]:
        return {"occupancy": self.occupied, "illuminance": self.illuminance(now), "battery": self.battery.level(now)}

    def report(self, now: float) -> dict[str, Any]:
        # Occupancy is news even when repeated (a new detection), so every report counts.
        self.occupied = self.rng.random() < 0.3
        return self.state(now)


class ClimateSensor(SimDevice):
    kind, model, power_source, in_rotation = "climate", "Virtual temperature and humidity sensor", "battery", True

    def __init__(self, source_id: str, name: str, rng: random.Random, room: str | None, now: float):
        super().__init__(source_id, name, rng, room)
        base = rng.randint(185, 230)
        self.temperature = Walk(rng, base, base - 25, base + 25)  # tenths of °C
        humid = rng.randint(400, 600)
        self.humidity = Walk(rng, humid, humid - 100, humid + 100)  # tenths of %
        self.battery = Battery(rng, now)

    def data_specs(self) -> list[DataSpec]:
        return [
            DataSpec("temperature", "number", "temperature", "°C"),
            DataSpec("humidity", "number", "humidity", "%"),
            DataSpec("battery", "number", "battery", "%"),
        ]

    def state(self, now: float) -> dict[str, Any]:
        return {"temperature": self.temperature.value / 10, "humidity": self.humidity.value / 10, "battery": self.battery.level(now)}

    def report(self, now: float) -> dict[str, Any]:
        self.temperature.step()
        self.humidity.step(self.rng.choice((1, 2, 3)))
        return self.state(now)


class Plug(SimDevice):
    kind, model, in_rotation, consumer = "plug", "Virtual smart plug", True, True

    def __init__(self, source_id: str, name: str, rng: random.Random, room: str | None, now: float, rated: float):
        super().__init__(source_id, name, rng, room)
        self.rated = rated
        self.on = rng.random() < 0.5
        self.meter = Meter(round(rng.uniform(1, 300), 3), now)
        self.voltage = Walk(rng, rng.randint(2280, 2320), 2250, 2350, 2300)  # tenths of V
        self.draw = rated

    def data_specs(self) -> list[DataSpec]:
        return [
            DataSpec("state", "enum", "generic", enum_values=ON_OFF),
            DataSpec("power", "number", "power", "W"),
            DataSpec("energy", "number", "energy", "kWh"),
            DataSpec("voltage", "number", "voltage", "V"),
        ]

    def order_specs(self) -> list[OrderSpec]:
        return [OrderSpec("state", "enum", "toggle_power", enum_values=ON_OFF_TOGGLE)]

    def power(self, now: float) -> float:
        return self.draw if self.on else 0.0

    def state(self, now: float) -> dict[str, Any]:
        power = self.power(now)
        return {
            "state": "ON" if self.on else "OFF",
            "power": round(power, 1),
            "energy": self.meter.integrate(power, now),
            "voltage": self.voltage.value / 10,
        }

    def report(self, now: float) -> dict[str, Any]:
        self.meter.integrate(self.power(now), now)  # the old draw up to now, then a new one
        self.draw = self.rated * self.rng.uniform(0.96, 1.04)
        self.voltage.step(self.rng.choice((1, 2, 3)))
        return self.state(now)

    def apply(self, key: str, value: Any, now: float) -> None:
        if key != "state":
            raise self.unknown(key)
        self.meter.integrate(self.power(now), now)
        self.on = switch_value(self.on, value)


class MainMeter(SimDevice):
    kind, model, in_rotation = "main_meter", "Virtual main energy meter", True

    def __init__(self, source_id: str, name: str, rng: random.Random, now: float, home: "VirtualHome"):
        super().__init__(source_id, name, rng)
        self.home = home
        self.base = rng.uniform(120, 260)  # what no simulated device accounts for (router, boiler ...)
        self.noise = 0.0
        self.meter = Meter(round(rng.uniform(2_000, 25_000), 2), now)

    def data_specs(self) -> list[DataSpec]:
        return [DataSpec("power", "number", "power", "W"), DataSpec("energy", "number", "energy", "kWh")]

    def power(self, now: float) -> float:
        return self.base + self.noise + self.home.consumption(now)

    def state(self, now: float) -> dict[str, Any]:
        power = self.power(now)
        return {"power": round(power, 1), "energy": self.meter.integrate(power, now)}

    def report(self, now: float) -> dict[str, Any]:
        self.meter.integrate(self.power(now), now)
        self.noise = self.rng.uniform(-15, 15)
        return self.state(now)


class ProductionMeter(SimDevice):
    kind, model, in_rotation = "production_meter", "Virtual solar production meter", True

    def __init__(self, source_id: str, name: str, rng: random.Random, now: float):
        super().__init__(source_id, name, rng)
        self.peak = float(rng.choice((3000, 4500, 6000)))
        self.clouds = Walk(rng, 90, 40, 100, 90)  # percent of clear sky
        self.meter = Meter(round(rng.uniform(500, 9_000), 2), now)
        self.reported: float | None = None
        self.current = self.peak * daylight(now) * 0.9

    def data_specs(self) -> list[DataSpec]:
        return [DataSpec("power", "number", "power", "W"), DataSpec("energy", "number", "energy", "kWh")]

    def state(self, now: float) -> dict[str, Any]:
        power = round(self.current, 1)
        self.reported = power
        return {"power": power, "energy": self.meter.integrate(self.current, now)}

    def report(self, now: float) -> dict[str, Any] | None:
        self.meter.integrate(self.current, now)
        self.current = self.peak * daylight(now) * self.clouds.step() / 100.0
        if round(self.current, 1) == 0 and self.reported == 0:
            return None  # an inverter has nothing to say at night
        return self.state(now)


class Button(SimDevice):
    kind, model, power_source, in_rotation = "button", "Virtual wireless button", "battery", True
    ACTIONS = ["single", "double", "long"]

    def __init__(self, source_id: str, name: str, rng: random.Random, now: float):
        super().__init__(source_id, name, rng)
        self.battery = Battery(rng, now)
        self.last: str | None = None

    def data_specs(self) -> list[DataSpec]:
        return [DataSpec("action", "enum", "action", enum_values=self.ACTIONS), DataSpec("battery", "number", "battery", "%")]

    def state(self, now: float) -> dict[str, Any]:
        return {"battery": self.battery.level(now)}  # no press at start-up

    def report(self, now: float) -> dict[str, Any] | None:
        if self.rng.random() >= 0.25:
            return None  # pressed only now and then
        draw = self.rng.random()
        self.last = "single" if draw < 0.6 else "double" if draw < 0.85 else "long"
        return {"action": self.last, "battery": self.battery.level(now)}


class Thermostat(SimDevice):
    kind, model, in_rotation = "thermostat", "Virtual thermostat", True
    MODES = ["auto", "heat", "cool", "off"]
    RUNNING = ["idle", "heat", "cool"]

    def __init__(self, source_id: str, name: str, rng: random.Random):
        super().__init__(source_id, name, rng)
        self.setpoint = float(rng.choice((19, 19.5, 20, 20.5, 21)))
        self.mode = rng.choice(("auto", "heat"))
        self.local = Walk(rng, int(self.setpoint * 10) - rng.randint(-10, 10), 100, 320)  # tenths of °C
        self.running = "idle"
        self._regulate()

    def data_specs(self) -> list[DataSpec]:
        return [
            DataSpec("local_temperature", "number", "temperature", "°C"),
            DataSpec("setpoint", "number", "setpoint", "°C"),
            DataSpec("system_mode", "enum", "operation_mode", enum_values=self.MODES),
            DataSpec("running_state", "enum", "generic", enum_values=self.RUNNING),
        ]

    def order_specs(self) -> list[OrderSpec]:
        return [
            OrderSpec("setpoint", "number", "set_setpoint", min=5, max=30, unit="°C"),
            OrderSpec("system_mode", "enum", "set_operation_mode", enum_values=self.MODES),
        ]

    def _regulate(self) -> None:
        target = int(round(self.setpoint * 10))
        temperature = self.local.value
        if self.mode in ("heat", "auto") and temperature < target - 3:
            self.running = "heat"
        elif self.mode in ("cool", "auto") and temperature > target + 3:
            self.running = "cool"
        elif abs(temperature - target) <= 1:
            self.running = "idle"
        if self.mode == "off":
            self.running = "idle"
        self.local.pull_to = 170 if self.mode == "off" else target  # off: drifts to the house's own 17 °C

    def state(self, now: float) -> dict[str, Any]:
        return {"local_temperature": self.local.value / 10, "setpoint": self.setpoint, "system_mode": self.mode, "running_state": self.running}

    def report(self, now: float) -> dict[str, Any]:
        self._regulate()
        self.local.step()
        return self.state(now)

    def apply(self, key: str, value: Any, now: float) -> None:
        if key == "setpoint":
            self.setpoint = round(number_value(value, 5, 30) * 2) / 2  # half-degree steps
        elif key == "system_mode":
            self.mode = enum_value(value, self.MODES)
        else:
            raise self.unknown(key)
        self._regulate()


class VmcRelays(SimDevice):
    kind, model, consumer = "vmc", "Virtual double relay (ventilation)", True
    SPEEDS = {"low": 18.0, "high": 42.0}

    def __init__(self, source_id: str, name: str, rng: random.Random):
        super().__init__(source_id, name, rng)
        self.relays = {"low": True, "high": False}

    def data_specs(self) -> list[DataSpec]:
        return [
            DataSpec("low", "enum", "generic", enum_values=ON_OFF),
            DataSpec("high", "enum", "generic", enum_values=ON_OFF),
            DataSpec("power", "number", "power", "W"),
        ]

    def order_specs(self) -> list[OrderSpec]:
        return [OrderSpec(relay, "enum", "toggle_power", enum_values=ON_OFF_TOGGLE) for relay in ("low", "high")]

    def power(self, now: float) -> float:
        return self.SPEEDS["high"] if self.relays["high"] else self.SPEEDS["low"] if self.relays["low"] else 0.0

    def state(self, now: float) -> dict[str, Any]:
        return {"low": "ON" if self.relays["low"] else "OFF", "high": "ON" if self.relays["high"] else "OFF", "power": self.power(now)}

    def apply(self, key: str, value: Any, now: float) -> None:
        if key not in self.relays:
            raise self.unknown(key)
        self.relays[key] = switch_value(self.relays[key], value)


class WaterValve(SimDevice):
    kind, model, power_source, in_rotation = "water_valve", "Virtual water valve", "battery", True

    def __init__(self, source_id: str, name: str, rng: random.Random, now: float):
        super().__init__(source_id, name, rng)
        self.open = False
        self.nominal = rng.choice((8, 10, 12, 15))  # L/min when open
        self.flow = Walk(rng, self.nominal * 10, self.nominal * 10 - 15, self.nominal * 10 + 15)  # tenths
        self.battery = Battery(rng, now)

    def data_specs(self) -> list[DataSpec]:
        return [
            DataSpec("state", "enum", "generic", enum_values=ON_OFF),
            DataSpec("flow", "number", "generic", "L/min"),
            DataSpec("battery", "number", "battery", "%"),
        ]

    def order_specs(self) -> list[OrderSpec]:
        return [OrderSpec("state", "enum", "valve_toggle", enum_values=ON_OFF_TOGGLE)]

    def state(self, now: float) -> dict[str, Any]:
        return {"state": "ON" if self.open else "OFF", "flow": self.flow.value / 10 if self.open else 0.0, "battery": self.battery.level(now)}

    def report(self, now: float) -> dict[str, Any] | None:
        if not self.open:
            return None  # a closed valve has nothing new to say
        self.flow.step()
        return self.state(now)

    def apply(self, key: str, value: Any, now: float) -> None:
        if key != "state":
            raise self.unknown(key)
        self.open = switch_value(self.open, value)


class Gate(SimDevice):
    kind, model = "gate", "Virtual gate controller"
    STATES = ["open", "closed"]
    TRIGGER = ["TRIGGER"]

    def __init__(self, source_id: str, name: str, rng: random.Random):
        super().__init__(source_id, name, rng)
        self.closed = True
        self.arrives_at = 0.0

    def data_specs(self) -> list[DataSpec]:
        return [
            DataSpec("state", "enum", "gate_state", enum_values=self.STATES),
            DataSpec("contact", "boolean", "contact_door"),  # true: the gate is closed
        ]

    def order_specs(self) -> list[OrderSpec]:
        return [OrderSpec("trigger", "enum", "gate_trigger", enum_values=self.TRIGGER)]

    def state(self, now: float) -> dict[str, Any]:
        return {"state": "closed" if self.closed else "open", "contact": self.closed}

    def apply(self, key: str, value: Any, now: float) -> None:
        if key != "trigger":
            raise self.unknown(key)
        if value is not None and value != "" and value is not True:
            enum_value(value, self.TRIGGER)
        if self.moving:
            self.moving = False  # a pulse while it travels stops it where it was
        else:
            self.moving, self.arrives_at = True, now + GATE_TRAVEL_S

    def progress(self, now: float) -> dict[str, Any] | None:
        if not self.moving or now < self.arrives_at:
            return None
        self.moving, self.closed = False, not self.closed
        return self.state(now)


# ---- the home -------------------------------------------------------------------------------


class VirtualHome:
    def __init__(self, rooms: int = 4, seed: Any = 1, now: float | None = None):
        now = time.time() if now is None else now
        layout = random.Random(f"hausbox-simulator:{seed}")
        self.rng = random.Random(f"hausbox-simulator:{seed}:noise")
        self.rooms = room_list(rooms)
        self.devices: dict[str, SimDevice] = {}
        self._room_shutters: dict[str, list[Shutter]] = {}
        self._room_lights: dict[str, list[Light | Dimmer]] = {}
        rng = self.rng
        for slug, label in self.rooms:
            for n in range(1, layout.choice((1, 1, 2)) + 1):
                self._add(Light(f"sim-{slug}-light-{n}", f"{label} light {n}", rng, slug))
            self._add(Dimmer(f"sim-{slug}-dimmer-1", f"{label} dimmer", rng, slug))
            self._add(Shutter(f"sim-{slug}-shutter-1", f"{label} shutter", rng, slug))
            self._add(MotionSensor(f"sim-{slug}-motion-1", f"{label} motion sensor", rng, slug, now, self))
            self._add(ClimateSensor(f"sim-{slug}-climate-1", f"{label} temperature sensor", rng, slug, now))
            appliance, rated = layout.choice(APPLIANCES)
            self._add(Plug(f"sim-{slug}-plug-1", f"{label} plug ({appliance.lower()})", rng, slug, now, rated))
        self._add(MainMeter("sim-main-meter", "Main energy meter", rng, now, self))
        self._add(ProductionMeter("sim-solar-meter", "Solar production meter", rng, now))
        self._add(Button("sim-button-1", "Entrance button", rng, now))
        self._add(Button("sim-button-2", "Bedside button", rng, now))
        self._add(Thermostat("sim-thermostat", "Thermostat", rng))
        self._add(VmcRelays("sim-vmc", "Ventilation relays", rng))
        self._add(WaterValve("sim-water-valve", "Garden water valve", rng, now))
        self._add(Gate("sim-gate", "Gate", rng))
        self.consumers = [d for d in self.devices.values() if d.consumer]
        # The periodic rotation, in a seeded order that interleaves kinds: a burst of messages is
        # spread over many devices (so no two land on the same device in one WebSocket batch).
        self.reporters = [d for d in self.devices.values() if d.in_rotation]
        layout.shuffle(self.reporters)
        self._next = 0
        self.moving: dict[str, SimDevice] = {}

    def _add(self, device: SimDevice) -> None:
        self.devices[device.source_id] = device
        if isinstance(device, Shutter) and device.room:
            self._room_shutters.setdefault(device.room, []).append(device)
        if isinstance(device, (Light, Dimmer)) and device.room:
            self._room_lights.setdefault(device.room, []).append(device)

    # ---- reads ---------------------------------------------------------------------------------
    def discovered(self) -> list[DiscoveredDevice]:
        return [device.discovered() for device in self.devices.values()]

    def device(self, source_id: str) -> SimDevice:
        device = self.devices.get(source_id)
        if device is None:
            raise ValueError(f"no simulated device {source_id!r}")
        return device

    def consumption(self, now: float) -> float:
        return sum(device.power(now) for device in self.consumers)

    def openness(self, room: str | None, now: float) -> float:
        shutters = self._room_shutters.get(room or "", [])
        return sum(s.openness(now) for s in shutters) / len(shutters) if shutters else 1.0

    def lights_on(self, room: str | None) -> bool:
        return any(light.on for light in self._room_lights.get(room or "", []))

    # ---- behaviour -----------------------------------------------------------------------------
    def execute(self, source_id: str, key: str, value: Any, now: float) -> SimDevice:
        """Apply an order; the device to report afterwards. ValueError for a bad key or value."""
        device = self.device(source_id)
        device.apply(key, value, now)
        if device.moving:
            self.moving[source_id] = device
        else:
            self.moving.pop(source_id, None)
        return device

    def next_report(self, now: float) -> tuple[str, dict[str, Any]] | None:
        """The next spontaneous message of the rotation: ``(source id, payload)``."""
        reporters = self.reporters
        count = len(reporters)
        for _ in range(count):
            device = reporters[self._next]
            self._next = (self._next + 1) % count
            payload = device.report(now)
            if payload:
                return device.source_id, payload
        return None

    def animate(self, now: float) -> list[tuple[str, dict[str, Any]]]:
        """Reports of the shutters and gates on their way; those that arrived stop moving."""
        reports = []
        for source_id, device in list(self.moving.items()):
            payload = device.progress(now)
            if not device.moving:
                del self.moving[source_id]
            if payload:
                reports.append((source_id, payload))
        return reports
