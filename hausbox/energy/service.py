"""The tariff in force (read from the settings store, compiled once per change), and the energy
routes' reads: the status, the history and the by-usage breakdown from the history store's
energy sums, and the baseline arbiter's metrics."""

from __future__ import annotations

from typing import Any

from hausbox.core.bus import EventBus
from hausbox.core.clock import Clock
from hausbox.core.errors import NotFound
from hausbox.core.settings import SettingsStore
from hausbox.energy import classify, tariff
from hausbox.energy.classify import CompiledTariff
from hausbox.energy.history import Prices, average_rate, history_body
from hausbox.energy.periods import Period, parse_query, period_of, read_sums
from hausbox.energy.sources import INJECTION, MAIN_METER_TYPE, SELF_CONSUMPTION, energy_keys, first_of_type, meter_roles
from hausbox.energy.usage import Series, usage_body

PRODUCTION_TYPE = "energy_production_meter"
NO_MAIN_METER = "No energy equipment configured"


class TariffService:
    def __init__(self, settings: SettingsStore, bus: EventBus, clock: Clock):
        self._settings = settings
        self._clock = clock
        settings.add_validator(tariff.SETTING_KEY, tariff.check_setting)
        self._load()
        bus.on("settings.changed", self._on_settings)

    def _load(self) -> None:
        self.current: dict[str, Any] = tariff.from_setting(self._settings.get(tariff.SETTING_KEY))
        self.compiled: CompiledTariff = classify.compile_tariff(self.current)

    def _on_settings(self, event: dict[str, Any]) -> None:
        if tariff.SETTING_KEY in event.get("keys", ()):
            self._load()

    def replace(self, body: Any, by: str | None = None) -> None:
        """Store a new tariff (BadRequest, nothing stored, when it is malformed)."""
        normal = tariff.normalize(body)
        self._settings.set_many({tariff.SETTING_KEY: tariff.to_setting(normal)}, by=by)
        self._load()

    def split(self, total_wh: float, instant_ms: int) -> tuple[float, float]:
        """``(hp_wh, hc_wh)`` of a reading taken at ``instant_ms``, in the home's time zone."""
        return classify.split(self.compiled, total_wh, instant_ms, self._clock.tz)

    def configured(self) -> bool:
        return tariff.is_configured(self.current)

    def prices(self) -> Prices:
        """``(hp, hc)`` in EUR/kWh, or None when no tariff is configured (every cost is then 0)."""
        if not self.configured():
            return None
        return float(self.current["prices"]["hp"]), float(self.current["prices"]["hc"])


def energy_status(engine: Any) -> dict[str, Any]:
    """What the energy pages can show: consumption once a main meter exists (the history store
    keeps its sums), the integrations its devices come from, and its last reading."""
    equipments = engine.equipments
    main = first_of_type(equipments, MAIN_METER_TYPE)
    sources: list[str] = []
    if main is not None:
        devices = (engine.devices.get(device_id) for device_id in equipments.device_ids(main))
        sources = sorted({device.integration_id for device in devices if device is not None})
    return {
        "available": main is not None,
        "hasProduction": first_of_type(equipments, PRODUCTION_TYPE) is not None,
        "sources": sources,
        "lastDataAt": last_reading_at(engine, main) if main is not None else None,
        "tariffConfigured": engine.tariff.configured(),
    }


def last_reading_at(engine: Any, main: Any) -> str | None:
    """The main meter's last reading seen since the start, else its stored baseline's time."""
    keys = energy_keys(engine.equipments, main)
    meters = engine.history.meters.metrics({key: {} for key in keys})["meters"]
    stamps = [m["lastReadingAt"] or (m["baseline"] or {}).get("at") for m in meters]
    return max((s for s in stamps if s), default=None)  # same ISO form throughout: text order is time order


def _period(engine: Any, query: Any) -> Period:
    name, day = parse_query(query, engine.clock.local_now().date())
    return period_of(name, day, engine.clock.tz)


def _production(engine: Any, period: Period) -> list[list[float]]:
    """``[prod, autoconso, injection]`` Wh per bucket (zeros with no production meter)."""
    meter = first_of_type(engine.equipments, PRODUCTION_TYPE)
    if meter is None:
        return [[0.0, 0.0, 0.0] for _ in period.starts]
    store = engine.history.store
    produced = read_sums(store, period, energy_keys(engine.equipments, meter))
    used = read_sums(store, period, [(meter.id, SELF_CONSUMPTION)])
    sent = read_sums(store, period, [(meter.id, INJECTION)])
    return [[sum(p), sum(u), sum(s)] for p, u, s in zip(produced, used, sent)]


def energy_history(engine: Any, query: Any) -> dict[str, Any]:
    """``GET /energy/history`` (400 for a bad period or date, 404 with no main meter)."""
    period = _period(engine, query)
    main = first_of_type(engine.equipments, MAIN_METER_TYPE)
    if main is None:
        raise NotFound(NO_MAIN_METER)
    consumption = read_sums(engine.history.store, period, energy_keys(engine.equipments, main))
    return history_body(period, consumption, _production(engine, period), engine.tariff.prices())


def energy_by_usage(engine: Any, query: Any) -> dict[str, Any]:
    """``GET /energy/by-usage``: the submeters, ``other``, and their costs at the period's rate."""
    period = _period(engine, query)
    equipments, store = engine.equipments, engine.history.store
    main = first_of_type(equipments, MAIN_METER_TYPE)
    total, rate = None, 0.0
    if main is not None:
        consumption = read_sums(store, period, energy_keys(equipments, main))
        total = [hp + hc for hp, hc in consumption]
        totals = history_body(period, consumption, _production(engine, period), engine.tariff.prices())["totals"]
        rate = average_rate(totals["total_hp"], totals["total_hc"], engine.tariff.prices())
    submeters: list[Series] = []
    separate: list[Series] = []
    for equipment in engine.equipments_view.submeters():
        values = [hp + hc for hp, hc in read_sums(store, period, energy_keys(equipments, equipment))]
        (separate if equipment.separate_supply else submeters).append(Series(equipment.id, equipment.name, equipment.type, values))
    return usage_body(period, submeters, separate, total, rate)


def arbiter_metrics(engine: Any) -> dict[str, Any]:
    """``GET /energy/arbiter/metrics``: what the baseline arbiter decided per energy binding."""
    return engine.history.meters.metrics(meter_roles(engine.equipments))
