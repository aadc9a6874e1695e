"""freecooling: close the open shutters before the sun rises, to keep the night's cool air in.

Every day at sunrise minus ``offsetMinutes`` (default 120), position 0 is ordered to every open
shutter of ``zone`` and of the zones below it: equipments of type ``shutter``, enabled, with a
position order. Sunrise is the home's (settings ``home.latitude`` / ``home.longitude``) on each
local day, so the instant follows the seasons and daylight saving time.

Open means not known to be closed: a reported position above 0, or no position reported at all
(many shutters never report; closing a closed one does nothing). A shutter whose position is 0
is left alone. A close missed while the engine was down is done on return if the sun has not
risen yet. Without the home's location nothing is planned (logged); setting it plans at once.

State: ``nextRunAt`` (ISO), ``lastRunAt`` (ISO), ``lastClosed`` (how many shutters were ordered).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from hausbox.sdk import Recipe, RecipeContext, Runner, Slot, format_duration, iso_utc, load_texts, next_boundary, parse_iso

SHUTTER_TYPE = "shutter"
MS_PER_MIN = 60_000
MAX_OFFSET_MIN = 720


def position_of(ctx: RecipeContext, equipment: Any) -> Any:
    """The shutter's reported position (its ``shutter_position`` data), or None."""
    for alias in equipment.data_bindings:
        datum = ctx.equipments.datum_of(equipment, alias)
        if datum is not None and datum.category == "shutter_position":
            return equipment.data.get(alias)
    return None


def known_closed(position: Any) -> bool:
    return isinstance(position, (int, float)) and not isinstance(position, bool) and position <= 0


class FreecoolingRunner(Runner):
    def __init__(self, params: dict[str, Any], ctx: RecipeContext):
        self.ctx = ctx
        self.zone_id: str = params["zone"]
        self.offset_ms = int(params["offsetMinutes"] * MS_PER_MIN)
        self.timer: Any = None
        self.no_sunrise_logged = False
        ctx.on("sunlight.changed", lambda _event: self.plan())
        self.catch_up()
        self.plan()

    # ---- when -----------------------------------------------------------------------------------
    def close_time(self, days_ahead: int) -> int | None:
        """The instant (ms) of a day's close: its sunrise minus the offset; None without a sunrise."""
        day = self.ctx.clock.local_now().date() + timedelta(days=days_ahead)
        rise = self.ctx.helpers.sunrise(day)
        return None if rise is None else round(rise.timestamp() * 1000) - self.offset_ms

    def next_close(self) -> int | None:
        """The next close; a long offset may put a day's close on the evening before it."""
        now = self.ctx.clock.now_ms()
        upcoming = [at for at in map(self.close_time, range(3)) if at is not None and at > now]
        return min(upcoming, default=None)

    def plan(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        at = self.next_close()
        self.ctx.state.set("nextRunAt", iso_utc(at))
        if at is not None:
            self.no_sunrise_logged = False
            self.timer = self.ctx.call_at(at, self._due)
            return
        if not self.no_sunrise_logged:
            self.no_sunrise_logged = True
            self.ctx.log("No sunrise to go by (the home's location is not set, or the sun does not rise): looking again tomorrow", "warn")
        tomorrow = next_boundary(self.ctx.clock.local_now(), "00:00")
        self.timer = self.ctx.call_at(int(tomorrow.timestamp() * 1000), self.plan)

    def catch_up(self) -> None:
        """A close planned while the engine was down, done on return if the sun has not risen yet."""
        stored = self.ctx.state.get("nextRunAt")
        try:
            at = parse_iso(stored) if isinstance(stored, str) else None
        except ValueError:
            at = None
        if at is not None and at <= self.ctx.clock.now_ms() < at + self.offset_ms:
            self.close_open_shutters("missed while the engine was down")

    def _due(self) -> None:
        self.timer = None
        self.close_open_shutters(f"sunrise in {format_duration(self.offset_ms)}")
        self.plan()

    # ---- what -----------------------------------------------------------------------------------
    def shutters(self) -> list[Any]:
        zones = self.ctx.zones.descendants(self.zone_id)
        found = [e for zone in zones for e in self.ctx.equipments.in_zone(zone.id)]
        return [e for e in found if e.type == SHUTTER_TYPE and e.enabled]

    def close(self, shutter: Any) -> bool:
        alias = self.ctx.helpers.order_alias(shutter.id, "position", "set_shutter_position")
        if alias is None:
            self.ctx.log(f"{shutter.name} has no position order: left open", "warn")
            return False
        return self.ctx.execute_order(shutter.id, alias, 0)

    def close_open_shutters(self, why: str) -> None:
        open_ones = [s for s in self.shutters() if not known_closed(position_of(self.ctx, s))]
        closed = [s.name for s in open_ones if self.close(s)]
        self.ctx.state.set("lastRunAt", iso_utc(self.ctx.clock.now_ms()))
        self.ctx.state.set("lastClosed", len(closed))
        names = f": {', '.join(closed)}" if closed else ""
        self.ctx.log(f"{len(closed)} open shutter(s) closed ({why}){names}")

    def stop(self) -> None:
        if self.ctx.stop_reason != "shutdown":
            self.ctx.state.delete("nextRunAt")  # no catch-up when enabled again


class Freecooling(Recipe):
    id = "freecooling"
    slots = (
        Slot("zone", "zone", required=True),
        Slot("offsetMinutes", "number", default=120, constraints={"min": 0, "max": MAX_OFFSET_MIN}),
    )
    i18n = load_texts(__name__)  # texts/<lang>.json

    def create_instance(self, params: dict[str, Any], ctx: RecipeContext) -> FreecoolingRunner:
        return FreecoolingRunner(params, ctx)


def create_recipe() -> Recipe:
    return Freecooling()
