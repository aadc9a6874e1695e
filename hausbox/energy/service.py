"""The tariff in force: read from the settings store, compiled once per change, and the status."""

from __future__ import annotations

from typing import Any

from hausbox.core.bus import EventBus
from hausbox.core.clock import Clock
from hausbox.core.settings import SettingsStore
from hausbox.energy import classify, tariff
from hausbox.energy.classify import CompiledTariff

PRODUCTION_TYPE = "energy_production_meter"
MAIN_METER_TYPE = "main_energy_meter"


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


def energy_status(engine: Any) -> dict[str, Any]:
    """What the energy pages can show. Consumption needs a main meter and the history store's
    energy sums (``engine.history.energy``, the next slice of the history work): until they exist
    the raw points alone give no consumption, so nothing is available and ``sources`` names none."""
    types = {equipment.type for equipment in engine.equipments.all()}
    has_energy_sums = getattr(getattr(engine, "history", None), "energy", None) is not None
    return {
        "available": MAIN_METER_TYPE in types and has_energy_sums,
        "hasProduction": PRODUCTION_TYPE in types,
        "sources": [],
        "lastDataAt": None,
        "tariffConfigured": engine.tariff.configured(),
    }
