"""The calendar: weekly slots that switch modes on or off, per profile; one profile is active.

- Profiles are built in (``work``, ``holidays``); the active one is the setting
  ``calendar.activeProfileId`` (``work`` when unset or naming no profile). Changing it, through
  ``PUT /calendar/active`` or the settings store, emits ``calendar.profile.changed``.
- A slot is ``{days, time, modeActions}``: weekdays 0 (Sunday) to 6, a local wall time "HH:MM",
  and ``[{modeId, action: "on" | "off"}]`` run in order when it fires. All three are checked when
  written (a mode must exist).
- Only the active profile's slots are scheduled, each on its own ``engine.clock`` timer at its
  next local occurrence (DST-correct: see core/clock.py); a fired slot schedules its next one.
  A slot whose time was jumped over by a clock change (more than ``LATE_GRACE_MS`` late) is skipped,
  as a slot missed while the box was off would be.
- A removed mode disappears from every slot's actions.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Mapping

from pony import orm

from hausbox.core.bus import Event, EventBus
from hausbox.core.clock import Clock, Timer, iso_utc, next_local_time, parse_hhmm
from hausbox.core.errors import BadRequest, NotFound
from hausbox.core.settings import SettingsStore
from hausbox.core.workers import Worker
from hausbox.modes.service import ModeService

log = logging.getLogger("hausbox.calendar")

SETTING = "calendar.activeProfileId"
DEFAULT_PROFILE = "work"
ACTIONS = ("on", "off")
LATE_GRACE_MS = 120_000


@dataclass
class Profile:
    id: str
    name: str
    built_in: bool
    created_at: int

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "builtIn": self.built_in, "createdAt": iso_utc(self.created_at)}


@dataclass
class Slot:
    id: str
    profile_id: str
    days: list[int]
    time: str
    mode_actions: list[dict[str, str]]
    created_at: int
    updated_at: int

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "profileId": self.profile_id,
            "days": list(self.days),
            "time": self.time,
            "modeActions": [dict(a) for a in self.mode_actions],
            "createdAt": iso_utc(self.created_at),
            "updatedAt": iso_utc(self.updated_at),
        }


def _slot_order(slot: Slot) -> tuple[str, int, str]:
    return slot.time, slot.created_at, slot.id


class CalendarService:
    def __init__(self, db: orm.Database, bus: EventBus, worker: Worker, clock: Clock, settings: SettingsStore, modes: ModeService):
        self._db = db
        self._bus = bus
        self._worker = worker  # slots fire here (outbound: held in shadow mode), after the bus events before them
        self._clock = clock
        self._settings = settings
        self._modes = modes
        self._profiles: dict[str, Profile] = {}
        self._slots: dict[str, Slot] = {}
        self._timers: dict[str, Timer] = {}
        self._running = False
        self._last_created = 0  # slot creation stamps are strictly increasing: they order same-time slots
        self._load()
        self._current = self.active_id()
        # cascades of a user's write (API only): done before it is acknowledged, so a read right after sees them
        bus.on("mode.removed", self._on_mode_removed)
        bus.on("settings.changed", self._on_settings_changed)

    def _load(self) -> None:
        with orm.db_session:
            for row in self._db.CalendarProfile.select():
                self._profiles[row.id] = Profile(row.id, row.name, row.built_in, row.created_at)
            for row in self._db.CalendarSlot.select():
                self._slots[row.id] = Slot(row.id, row.profile_id, list(row.days), row.time, list(row.mode_actions or []), row.created_at, row.updated_at)
                self._last_created = max(self._last_created, row.created_at)

    # ---- life cycle --------------------------------------------------------------------------
    def start(self) -> None:
        self._running = True
        self._current = self.active_id()
        self._reschedule_all()

    def stop(self) -> None:
        self._running = False
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()

    # ---- reads -------------------------------------------------------------------------------
    def active_id(self) -> str:
        wanted = self._settings.get(SETTING)
        return wanted if isinstance(wanted, str) and wanted in self._profiles else DEFAULT_PROFILE

    def profile(self, profile_id: str) -> Profile:
        profile = self._profiles.get(profile_id)
        if profile is None:
            raise NotFound(f"Calendar profile not found: {profile_id}")
        return profile

    def profiles_json(self) -> list[dict[str, Any]]:
        ordered = sorted(self._profiles.values(), key=lambda p: (not p.built_in, p.name.lower(), p.id))
        return [p.to_json() for p in ordered]

    def slots_json(self, profile_id: str) -> list[dict[str, Any]]:
        self.profile(profile_id)
        return [self._slot_json(s) for s in sorted((s for s in self._slots.values() if s.profile_id == profile_id), key=_slot_order)]

    def _slot_json(self, slot: Slot) -> dict[str, Any]:
        """The slot, with ``nextRunAt`` (ISO) when it is scheduled (active profile), else null."""
        return {**slot.to_json(), "nextRunAt": iso_utc(self.next_run_ms(slot.id))}

    def active_json(self) -> dict[str, Any]:
        profile_id = self.active_id()
        return {"profile": self.profile(profile_id).to_json(), "slots": self.slots_json(profile_id)}

    def next_run_ms(self, slot_id: str) -> int | None:
        """When the slot fires next (None when it is not scheduled: inactive profile, stopped)."""
        timer = self._timers.get(slot_id)
        return timer.when_ms if timer is not None and timer.active else None

    # ---- writes ------------------------------------------------------------------------------
    def set_active(self, profile_id: str) -> dict[str, Any]:
        if profile_id not in self._profiles:
            raise BadRequest(f"profileId: calendar profile not found: {profile_id}")
        self._settings.set(SETTING, profile_id)  # settings.changed -> _profile_maybe_changed
        self._profile_maybe_changed()
        return self.active_json()

    def create_slot(self, profile_id: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        self.profile(profile_id)
        days = self._check_days(fields.get("days"))
        time = self._check_time(fields.get("time"))
        actions = self._check_actions(fields.get("modeActions"))
        stamp = self._last_created = max(self._clock.now_ms(), self._last_created + 1)
        slot = Slot(str(uuid.uuid4()), profile_id, days, time, actions, stamp, stamp)
        with orm.db_session:
            self._db.CalendarSlot(id=slot.id, profile_id=profile_id, days=days, time=time, mode_actions=actions, created_at=stamp, updated_at=stamp)
        self._slots[slot.id] = slot
        self._reschedule(slot)
        return self._slot_json(slot)

    def update_slot(self, slot_id: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        slot = self._slot(slot_id)
        changes: dict[str, Any] = {}
        if "days" in fields:
            changes["days"] = self._check_days(fields["days"])
        if "time" in fields:
            changes["time"] = self._check_time(fields["time"])
        if "modeActions" in fields:
            changes["mode_actions"] = self._check_actions(fields["modeActions"])
        changes["updated_at"] = self._clock.now_ms()
        with orm.db_session:
            self._db.CalendarSlot[slot_id].set(**changes)
        for name, value in changes.items():
            setattr(slot, name, value)
        self._reschedule(slot)
        return self._slot_json(slot)

    def delete_slot(self, slot_id: str) -> None:
        self._slot(slot_id)
        with orm.db_session:
            self._db.CalendarSlot[slot_id].delete()
        del self._slots[slot_id]
        self._unschedule(slot_id)

    def _slot(self, slot_id: str) -> Slot:
        slot = self._slots.get(slot_id)
        if slot is None:
            raise NotFound(f"Calendar slot not found: {slot_id}")
        return slot

    # ---- validation (the schema checked the shapes; these check the meaning) -------------------
    @staticmethod
    def _check_days(days: Any) -> list[int]:
        if not isinstance(days, list) or not days:
            raise BadRequest("days must be a non-empty array of weekdays (0 = Sunday to 6 = Saturday)")
        result = []
        for index, day in enumerate(days):
            if isinstance(day, float) and day.is_integer():
                day = int(day)
            if isinstance(day, bool) or not isinstance(day, int) or not 0 <= day <= 6:
                raise BadRequest(f"days[{index}] must be an integer from 0 (Sunday) to 6 (Saturday)")
            if day in result:
                raise BadRequest(f"days[{index}]: day {day} is listed twice")
            result.append(day)
        return sorted(result)

    @staticmethod
    def _check_time(time: Any) -> str:
        if not isinstance(time, str):
            raise BadRequest("time must be a string HH:MM")
        try:
            hour, minute = parse_hhmm(time.strip())
        except ValueError:
            raise BadRequest(f"time must be HH:MM from 00:00 to 23:59, got {time!r}") from None
        return f"{hour:02d}:{minute:02d}"

    def _check_actions(self, actions: Any) -> list[dict[str, str]]:
        if not isinstance(actions, list):
            raise BadRequest("modeActions must be an array")
        result = []
        for index, action in enumerate(actions):
            where = f"modeActions[{index}]"
            if not isinstance(action, dict):
                raise BadRequest(f"{where} must be an object")
            mode_id, kind = action.get("modeId"), action.get("action")
            if not isinstance(mode_id, str) or not mode_id:
                raise BadRequest(f"{where}.modeId is required")
            if kind not in ACTIONS:
                raise BadRequest(f"{where}.action must be one of {', '.join(ACTIONS)}")
            if not self._modes.exists(mode_id):
                raise BadRequest(f"{where}.modeId: mode not found: {mode_id}")
            result.append({"modeId": mode_id, "action": kind})
        return result

    # ---- scheduling --------------------------------------------------------------------------
    def _profile_maybe_changed(self) -> None:
        active = self.active_id()
        if active == self._current:
            return
        self._current = active
        self._reschedule_all()
        profile = self._profiles[active]
        log.info("calendar profile is now %s", profile.name)
        self._bus.emit("calendar.profile.changed", profileId=profile.id, profileName=profile.name)

    def _reschedule_all(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        for slot in self._slots.values():
            self._reschedule(slot)

    def _unschedule(self, slot_id: str) -> None:
        timer = self._timers.pop(slot_id, None)
        if timer is not None:
            timer.cancel()

    def _reschedule(self, slot: Slot, after_ms: int | None = None) -> None:
        self._unschedule(slot.id)
        if not self._running or slot.profile_id != self._current or not slot.days:
            return
        after = datetime.fromtimestamp((after_ms if after_ms is not None else self._clock.now_ms()) / 1000, tz=self._clock.tz)
        when = next_local_time(after, slot.days, slot.time, self._clock.tz)
        when_ms = int(when.timestamp() * 1000)
        slot_id = slot.id
        self._timers[slot_id] = self._clock.call_at(when_ms, lambda: self._worker.submit_outbound(self._fire, slot_id, when_ms))

    def _fire(self, slot_id: str, due_ms: int) -> None:
        self._timers.pop(slot_id, None)
        slot = self._slots.get(slot_id)
        if slot is None or not self._running or slot.profile_id != self._current:
            return
        now = self._clock.now_ms()
        self._reschedule(slot, after_ms=max(now, due_ms))  # the next occurrence first: actions may take time
        if now - due_ms > LATE_GRACE_MS:
            log.warning("calendar slot %s at %s skipped: the clock jumped past it (%d s late)", slot.id, slot.time, (now - due_ms) // 1000)
            return
        log.info("calendar slot %s at %s fires (%s)", slot.id, slot.time, self._profiles[slot.profile_id].name)
        for action in list(slot.mode_actions):
            try:
                if action["action"] == "on":
                    self._modes.activate(action["modeId"])
                else:
                    self._modes.deactivate(action["modeId"])
            except Exception as error:
                log.warning("calendar slot %s: turning mode %s %s failed: %s", slot.id, action["modeId"], action["action"], getattr(error, "message", None) or error)

    # ---- bus ---------------------------------------------------------------------------------
    def _on_settings_changed(self, event: Event) -> None:
        if SETTING in event.get("keys", ()):
            self._profile_maybe_changed()

    def _on_mode_removed(self, event: Event) -> None:
        mode_id = event.get("modeId")
        touched = [s for s in self._slots.values() if any(a["modeId"] == mode_id for a in s.mode_actions)]
        if not touched:
            return
        stamp = self._clock.now_ms()
        with orm.db_session:
            for slot in touched:
                slot.mode_actions = [a for a in slot.mode_actions if a["modeId"] != mode_id]
                slot.updated_at = stamp
                self._db.CalendarSlot[slot.id].set(mode_actions=slot.mode_actions, updated_at=stamp)
        for slot in touched:
            self._reschedule(slot)
