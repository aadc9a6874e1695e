"""The synthetic home and the load schedule, shared by the bench and its load generator.

500 zigbee2mqtt-shaped devices: 200 sensors (temperature, humidity), 150 plugs (state, power) and
150 lights (state, brightness). Every load message is the full state of one device (as zigbee2mqtt
publishes with its default ``cache_state``), and exactly one value in it changes.

The schedule is a pure function of a global sequence number ``seq`` (continuous over the whole run):
``seq`` goes to device ``seq % N``; that device's ``n``-th message (``n = seq // N``) changes one
*stream* (a device and key) to the value of that stream's counter ``c``. Values cycle with a period
per key, so a value identifies its counter modulo the period; a receiver that follows a stream in
order (the service keeps the latest value per device and key, never an older one after a newer one)
recovers the exact counter, hence the exact ``seq`` and its publish time. See ``Decoder``.
"""

from __future__ import annotations

import json
from typing import Any

N_DEVICES = 500
BASE_TOPIC = "zigbee2mqtt"

SENSOR, PLUG, LIGHT = "sensor", "plug", "light"

# key -> (period, offset, scale, digits): value(c) = round(offset + (c % period) / scale, digits)
_CYCLES: dict[str, tuple[int, float, float, int | None]] = {
    "temperature": (1500, 15.0, 100.0, 2),  # 15.00 .. 29.99 °C
    "humidity": (4000, 30.0, 100.0, 2),  # 30.00 .. 69.99 %
    "power": (20000, 1.0, 10.0, 1),  # 1.0 .. 2000.9 W
    "brightness": (254, 1, 1, None),  # 1 .. 254
}
# Values outside every cycle: what a device reports before the load starts.
INITIAL = {"temperature": 14.0, "humidity": 25.0, "power": 0.0, "brightness": 0}
KEY_INDEX = {"temperature": 0, "humidity": 1, "power": 0, "brightness": 0}


def kind(d: int) -> str:
    r = d % 10
    return SENSOR if r < 4 else PLUG if r < 7 else LIGHT


def name(d: int) -> str:
    return f"bench_{kind(d)}_{d:03d}"


def devices_of(kind_name: str, n_devices: int = N_DEVICES) -> list[int]:
    return [d for d in range(n_devices) if kind(d) == kind_name]


# ---- the retained bridge/devices list -----------------------------------------------------------
def _numeric(prop: str, unit: str | None, access: int = 1, lo: float | None = None, hi: float | None = None, category: str | None = None) -> dict[str, Any]:
    expose: dict[str, Any] = {"access": access, "label": prop.capitalize(), "name": prop, "property": prop, "type": "numeric"}
    if unit:
        expose["unit"] = unit
    if lo is not None:
        expose["value_min"] = lo
    if hi is not None:
        expose["value_max"] = hi
    if category:
        expose["category"] = category
    return expose


def _state(what: str) -> dict[str, Any]:
    return {
        "access": 7, "description": f"On/off state of this {what}", "label": "State", "name": "state", "property": "state",
        "type": "binary", "value_off": "OFF", "value_on": "ON", "value_toggle": "TOGGLE",
    }  # fmt: skip


_LINKQUALITY = _numeric("linkquality", "lqi", lo=0, hi=255, category="diagnostic")


def exposes(kind_name: str) -> list[dict[str, Any]]:
    if kind_name == SENSOR:
        return [
            _numeric("battery", "%", lo=0, hi=100, category="diagnostic"),
            _numeric("temperature", "°C"),
            _numeric("humidity", "%"),
            _LINKQUALITY,
        ]
    if kind_name == PLUG:
        return [
            {"features": [_state("switch")], "type": "switch"},
            _numeric("power", "W", access=5),
            _numeric("energy", "kWh", access=5),
            _LINKQUALITY,
        ]
    brightness = _numeric("brightness", None, access=7, lo=0, hi=254)
    return [{"features": [_state("light"), brightness], "type": "light"}, _LINKQUALITY]


_MODELS = {
    SENSOR: ("Aqara", "WSDCGQ11LM", "Temperature and humidity sensor", "EndDevice", "Battery"),
    PLUG: ("Nous", "A1Z", "Smart plug with power monitoring", "Router", "Mains (single phase)"),
    LIGHT: ("IKEA", "LED1650R5", "TRADFRI bulb GU10, white, 400 lm", "Router", "Mains (single phase)"),
}


def bridge_entry(d: int) -> dict[str, Any]:
    k = kind(d)
    vendor, model, description, device_type, power_source = _MODELS[k]
    ieee = f"0x{0xB0C0000000000000 + d:016x}"
    return {
        "definition": {"description": description, "exposes": exposes(k), "model": model, "options": [], "source": "native", "supports_ota": False, "vendor": vendor},
        "disabled": False,
        "friendly_name": name(d),
        "ieee_address": ieee,
        "interview_completed": True,
        "interview_state": "SUCCESSFUL",
        "interviewing": False,
        "manufacturer": vendor,
        "model_id": model,
        "network_address": 1000 + d,
        "power_source": power_source,
        "supported": True,
        "type": device_type,
    }


def bridge_devices(n_devices: int = N_DEVICES) -> bytes:
    coordinator = {"friendly_name": "Coordinator", "ieee_address": "0x00124b0029a1f3c2", "type": "Coordinator", "network_address": 0, "supported": True, "disabled": False}
    return json.dumps([coordinator] + [bridge_entry(d) for d in range(n_devices)], separators=(",", ":")).encode()


# ---- the load schedule --------------------------------------------------------------------------
def value(key: str, c: int) -> Any:
    period, offset, scale, digits = _CYCLES[key]
    if digits is None:
        return int(offset + c % period)
    return round(offset + (c % period) / scale, digits)


def residue(key: str, v: Any) -> int | None:
    """``c % period`` for a value of the cycle, or None for a value outside it (an initial value)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    period, offset, scale, _digits = _CYCLES[key]
    r = int(round((v - offset) * scale))
    return r if 0 <= r < period else None


def period(key: str) -> int:
    return _CYCLES[key][0]


def message(seq: int, n_devices: int = N_DEVICES) -> tuple[int, str, int]:
    """``(device, key, counter)`` of load message ``seq``."""
    d, n = seq % n_devices, seq // n_devices
    k = kind(d)
    if k == SENSOR:
        return d, ("temperature" if n % 2 == 0 else "humidity"), n // 2
    return d, ("power" if k == PLUG else "brightness"), n


def seq_of(d: int, key: str, c: int, n_devices: int = N_DEVICES) -> int:
    n = 2 * c + 1 if key == "humidity" else 2 * c if key == "temperature" else c
    return n * n_devices + d


def stream_id(d: int, key: str) -> int:
    return 2 * d + KEY_INDEX[key]


def stream_of_seq(seq: int, n_devices: int = N_DEVICES) -> int:
    d, n = seq % n_devices, seq // n_devices
    return 2 * d + (n % 2 if kind(d) == SENSOR else 0)


def last_counter(d: int, key: str, start_seq: int, n_devices: int = N_DEVICES) -> int:
    """The counter of the last message of stream (d, key) published before ``start_seq`` (-1: none)."""
    sent = (start_seq - d + n_devices - 1) // n_devices if start_seq > d else 0  # messages to device d so far
    if key == "temperature":
        return (sent + 1) // 2 - 1
    if key == "humidity":
        return sent // 2 - 1
    return sent - 1


def state(seq: int, n_devices: int = N_DEVICES) -> tuple[int, bytes]:
    """``(device, payload)``: the full state the device publishes with message ``seq``."""
    d, key, c = message(seq, n_devices)
    k = kind(d)
    if k == SENSOR:
        if key == "temperature":
            temperature, humidity = value("temperature", c), value("humidity", c - 1) if c > 0 else INITIAL["humidity"]
        else:
            temperature, humidity = value("temperature", c), value("humidity", c)
        body: dict[str, Any] = {"battery": 87, "humidity": humidity, "linkquality": 120, "temperature": temperature}
    elif k == PLUG:
        body = {"energy": 12.5, "linkquality": 150, "power": value("power", c), "state": "ON"}
    else:
        body = {"brightness": value("brightness", c), "linkquality": 140, "state": "ON"}
    return d, json.dumps(body, separators=(",", ":")).encode()


def initial_state(d: int) -> bytes:
    k = kind(d)
    if k == SENSOR:
        body: dict[str, Any] = {"battery": 87, "humidity": INITIAL["humidity"], "linkquality": 120, "temperature": INITIAL["temperature"]}
    elif k == PLUG:
        body = {"energy": 12.5, "linkquality": 150, "power": INITIAL["power"], "state": "ON"}
    else:
        body = {"brightness": INITIAL["brightness"], "linkquality": 140, "state": "ON"}
    return json.dumps(body, separators=(",", ":")).encode()


STREAM_KEYS = {SENSOR: ("temperature", "humidity"), PLUG: ("power",), LIGHT: ("brightness",)}


class Decoder:
    """Turns a received ``(deviceId, key, value)`` back into the ``seq`` that published it.

    Start it at the first seq the receiver can see (``start_seq``): every stream's last counter
    before that point is known from the schedule. Each value then maps to the smallest counter
    after the stream's last one with that residue; this is exact as long as fewer than one period
    of a stream's values (254 for a light, the shortest) go by unseen between two receipts.
    """

    def __init__(self, device_index: dict[str, int], start_seq: int, n_devices: int = N_DEVICES):
        self.index = device_index
        self.last: dict[tuple[int, str], int] = {}
        for d in set(device_index.values()):
            for key in STREAM_KEYS[kind(d)]:
                self.last[(d, key)] = last_counter(d, key, start_seq, n_devices)
        self.n_devices = n_devices

    def decode(self, device_id: Any, key: Any, v: Any) -> int | None:
        d = self.index.get(device_id)
        if d is None:
            return None
        last = self.last.get((d, key))
        if last is None:
            return None
        r = residue(key, v)
        if r is None:
            return None
        p = period(key)
        if last >= 0 and r == last % p:
            return None  # the value already seen (a repeat, not news)
        c = last + 1 + ((r - (last + 1)) % p)
        self.last[(d, key)] = c
        return seq_of(d, key, c, self.n_devices)
