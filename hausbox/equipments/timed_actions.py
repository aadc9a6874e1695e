"""Timed actions: an order now, its revert later (spec, States: Timed action; at most one per equipment).

``POST /equipments/:id/timed-action`` with ``{alias, value, revertValue, durationMs}`` (or an empty body
for the equipment's configured ``timedCommand``) sends ``value`` at once through the normal order
path and arms a deadline ``now + durationMs``; when it passes, ``revertValue`` is sent. The armed
slot is a row of ``timed_actions``, so it survives a restart, and a deadline passed while the service
was down is honoured when it starts again.

While armed:

- the same alias and value again pushes the expiry back and sends nothing. When the configured
  ``timedCommand`` has ``durationStepsMs`` (and is what is armed), each such call moves to the next
  step instead, and past the last one the slot ends (``{disarmed: true}``) leaving the equipment as
  it is. The step is found from the slot's current duration against the steps configured now, never
  from a stored index, so a steps edit made while armed is honoured.
- another alias or value replaces the action, and the new one is sent.
- the state measure announcing the revert value (a manual revert at the wall switch) ends the slot:
  nothing is sent at expiry. A change our own send caused is not such an announcement.
- ``DELETE`` abandons the slot, or with ``?revert=true`` sends the revert now.
- deleting the equipment removes the slot.

A revert that cannot be sent at expiry raises a system alarm and is dropped, never replayed. Right
after a start, a due revert waits for its integration to connect (up to ``startup_grace_ms``), since
a broker connection takes a moment and "not connected yet" is not "could not be sent".

Eligibility: the equipment carries the order (an order binding with that alias) and a state measure
bound to it: the data binding of the same alias, or one in a state category (``STATE_CATEGORIES``).
Otherwise 400 with code ``TimedCommandNotEligible``. All time comes from the engine's clock.
"""

from __future__ import annotations

import logging
from typing import Any

from pony import orm

from hausbox.core.bus import Event, EventBus
from hausbox.core.clock import Clock, Timer, iso_utc
from hausbox.core.errors import ApiError, BadRequest, Conflict, NotFound
from hausbox.core.workers import Worker
from hausbox.equipments import timed_command
from hausbox.equipments.confirmation import values_match
from hausbox.equipments.equipment import Equipment
from hausbox.equipments.manager import EquipmentManager
from hausbox.equipments.orders import OrderService, resolve_value
from hausbox.integrations.registry import IntegrationRegistry
from hausbox.system.alarms import Alarms

log = logging.getLogger("hausbox.timed-actions")

NOT_ELIGIBLE = "TimedCommandNotEligible"
STATE_CATEGORIES = frozenset({"light_state", "gate_state", "cover_state", "lock_state", "appliance_state"})
ALARM_SOURCE = "timed-action"
STARTUP_GRACE_MS = 60_000


class Armed:
    """One armed slot. ``mirror`` is the state measure's alias; ``own_echo`` is set while the echo
    of our own send is still expected and would look like the revert value (action == revert)."""

    __slots__ = ("equipment_id", "alias", "value", "revert_value", "duration_ms", "armed_at", "armed_by", "expires_at", "mirror", "timer", "own_echo", "deferred")

    def __init__(self, equipment_id: str, alias: str, value: Any, revert_value: Any, duration_ms: int, armed_at: int, armed_by: str | None, expires_at: int):
        self.equipment_id, self.alias, self.value, self.revert_value = equipment_id, alias, value, revert_value
        self.duration_ms, self.armed_at, self.armed_by, self.expires_at = duration_ms, armed_at, armed_by, expires_at
        self.mirror: str | None = None
        self.timer: Timer | None = None
        self.own_echo = False
        self.deferred = False  # a due revert waiting for its integration after a start

    @property
    def alarm_id(self) -> str:
        return f"timed-revert:{self.equipment_id}"


def same_value(a: Any, b: Any) -> bool:
    """Equal, or the same word in another case (``on`` and ``ON`` are one action)."""
    if isinstance(a, str) and isinstance(b, str):
        return a.strip().lower() == b.strip().lower()
    return a == b and type(a) is type(b)


def placement(steps: list[int] | None, duration_ms: int) -> tuple[int, int | None]:
    """``(stepIndex, nextDurationMs)`` of a slot lasting ``duration_ms`` among ``steps``.

    The index is that of the longest step not above the duration; the next duration is the first
    step above it (None: the slot is at, or beyond, the last step).
    """
    if not steps:
        return 0, None
    index = max(0, sum(1 for step in steps if step <= duration_ms) - 1)
    return index, next((step for step in steps if step > duration_ms), None)


class TimedActions:
    def __init__(
        self, db: orm.Database, bus: EventBus, worker: Worker, clock: Clock, equipments: EquipmentManager, orders: OrderService,
        integrations: IntegrationRegistry, alarms: Alarms, startup_grace_ms: int = STARTUP_GRACE_MS,
    ):  # fmt: skip
        self._db = db
        self._bus = bus
        self._worker = worker  # bus events and due reverts run here, in order
        self._clock = clock
        self._equipments = equipments
        self._orders = orders
        self._integrations = integrations
        self._alarms = alarms
        self.startup_grace_ms = startup_grace_ms
        self._armed: dict[str, Armed] = {}
        self._sending: set[str] = set()  # equipments whose state changes are our own send's doing
        self._grace_until: int | None = None
        self._started = False
        self._stopped = False
        self._load()
        equipments.equipment_decorators.append(self.decorate)
        worker.on("system.started", lambda _event: self.start())
        worker.on("equipment.data.changed", self._on_data_changed, accept=lambda e: e["equipmentId"] in self._armed)
        bus.on("equipment.removed", self._on_equipment_removed)  # a cascade of a user's deletion: before it is acknowledged
        worker.on("system.integration.connected", self._on_integration_connected)

    def _load(self) -> None:
        with orm.db_session:
            for row in self._db.TimedAction.select():
                equipment = self._equipments.get(row.equipment_id)
                if equipment is None:
                    row.delete()
                    continue
                record = Armed(row.equipment_id, row.alias, row.value, row.revert_value, row.duration_ms, row.armed_at, row.armed_by, row.expires_at)
                record.mirror = self.state_measure(equipment, row.alias)
                self._armed[record.equipment_id] = record

    # ---- life cycle --------------------------------------------------------------------------
    def start(self) -> None:
        """Schedule the slots found at start-up; a deadline passed meanwhile is honoured now."""
        if self._started:
            return
        self._started = True
        now = self._clock.now_ms()
        self._grace_until = now + self.startup_grace_ms
        for record in sorted(self._armed.values(), key=lambda r: r.expires_at):
            if record.timer is not None:
                continue
            if record.expires_at <= now:
                log.info("timed action on %s expired while the service was down: reverting", record.equipment_id)
                self._expire(record)
            else:
                self._schedule(record)

    def stop(self) -> None:
        self._stopped = True
        for record in self._armed.values():
            self._cancel(record)

    # ---- reads -------------------------------------------------------------------------------
    def armed(self, equipment_id: str) -> Armed | None:
        return self._armed.get(equipment_id)

    def state_measure(self, equipment: Equipment, alias: str) -> str | None:
        """The data alias that shows the state the order ``alias`` acts on, if any."""
        if alias in equipment.data_bindings:
            return alias
        for data_alias in equipment.data_bindings:
            datum = self._equipments.datum_of(equipment, data_alias)
            if datum is not None and datum.category in STATE_CATEGORIES:
                return data_alias
        return None

    def check_eligible(self, equipment: Equipment, alias: str) -> str:
        """The state measure's alias, or a 400 ``TimedCommandNotEligible``."""
        if alias not in equipment.order_bindings or self._equipments.order_of(equipment, alias) is None:
            raise BadRequest(f"{equipment.name} has no order {alias}: not eligible for a timed action", code=NOT_ELIGIBLE)
        mirror = self.state_measure(equipment, alias)
        if mirror is None:
            raise BadRequest(f"{equipment.name} has no state measure bound: not eligible for a timed action", code=NOT_ELIGIBLE)
        return mirror

    def _steps(self, equipment: Equipment, record: Armed) -> list[int] | None:
        """The configured steps, when the armed action is the configured one."""
        config = equipment.timed_command
        if not config or not config.get("durationStepsMs") or config.get("alias") != record.alias:
            return None
        return list(config["durationStepsMs"]) if same_value(config.get("value"), record.value) else None

    def to_json(self, equipment: Equipment, record: Armed) -> dict[str, Any]:
        index, next_ms = placement(self._steps(equipment, record), record.duration_ms)
        return {
            "alias": record.alias,
            "value": record.value,
            "revertValue": record.revert_value,
            "durationMs": record.duration_ms,
            "expiresAt": iso_utc(record.expires_at),
            "armedAt": iso_utc(record.armed_at),
            "armedBy": record.armed_by,
            "stepIndex": index,
            "nextDurationMs": next_ms,
        }

    def decorate(self, equipment: Equipment, body: dict[str, Any]) -> None:
        record = self._armed.get(equipment.id)
        if record is not None:
            body["timedAction"] = self.to_json(equipment, record)

    # ---- POST: arm, push back, step, replace -------------------------------------------------
    def _request(self, equipment: Equipment, body: dict[str, Any]) -> dict[str, Any]:
        """The action asked for: the body's, or the configured timedCommand for an empty body."""
        if not body:
            config = equipment.timed_command
            if not config:
                raise Conflict("No timedCommand is configured on this equipment")
            self.check_eligible(equipment, config["alias"])
            return dict(config)
        alias = body.get("alias")
        if not isinstance(alias, str) or not alias.strip():
            raise BadRequest("alias is required")
        self.check_eligible(equipment, alias.strip())
        fields = {name: body.get(name) for name in ("alias", "value", "revertValue", "durationMs")}
        try:
            request = timed_command.normalise(equipment, fields)  # the timedCommand rules, steps aside
        except BadRequest as error:
            raise BadRequest(error.message.replace("timedCommand.", "")) from None
        assert request is not None
        return request

    def arm(self, equipment_id: str, body: dict[str, Any] | None, user_id: str | None = None) -> dict[str, Any]:
        equipment = self._equipments.require(equipment_id)
        request = self._request(equipment, body or {})
        alias, value = request["alias"], request["value"]
        order = self._equipments.order_of(equipment, alias)
        resolve_value(order, request["revertValue"])  # a revert the order would refuse is refused now
        now = self._clock.now_ms()
        current = self._armed.get(equipment_id)
        if current is not None and current.alias == alias and same_value(current.value, value):
            steps = self._steps(equipment, current)
            if steps:
                _, next_ms = placement(steps, current.duration_ms)
                if next_ms is None:
                    log.info("timed action on %s: past the last step, disarmed", equipment.name)
                    self._remove(current)
                    self._announce(equipment_id)
                    return {"disarmed": True}
                current.duration_ms = next_ms
            else:
                current.duration_ms = request["durationMs"]
            current.revert_value = request["revertValue"]
            current.expires_at = now + current.duration_ms
            self._save(current)
            self._schedule(current)
            self._announce(equipment_id)
            return self.to_json(equipment, current)

        record = Armed(equipment_id, alias, value, request["revertValue"], request["durationMs"], now, user_id, now + request["durationMs"])
        record.mirror = self.state_measure(equipment, alias)
        # When action and revert are one state, the echo of this send (which the worker sees after
        # the send, or later still) is not a manual revert; there is an echo only if the state changes.
        seen = equipment.data.get(record.mirror) if record.mirror else None
        record.own_echo = values_match(record.value, record.revert_value) and not values_match(record.value, seen)
        # In place before the send, so that the state change it causes is judged against it.
        self._armed[equipment_id] = record
        self._sending.add(equipment_id)
        try:
            self._orders.execute(equipment_id, alias, value, {"kind": "manual", "userId": user_id, "timedAction": True})
        except Exception:
            if current is not None:
                self._armed[equipment_id] = current
                self._schedule(current)
            else:
                self._armed.pop(equipment_id, None)
            raise
        finally:
            self._sending.discard(equipment_id)
        if current is not None:
            self._cancel(current)
        record.expires_at = self._clock.now_ms() + record.duration_ms  # the send may have taken a retry
        self._save(record)
        self._schedule(record)
        self._announce(equipment_id)
        return self.to_json(equipment, record)

    # ---- DELETE ------------------------------------------------------------------------------
    def disarm(self, equipment_id: str, revert: bool = False, user_id: str | None = None) -> None:
        """End the slot early; with ``revert`` the revert is sent now (and the slot kept if it fails)."""
        self._equipments.require(equipment_id)
        record = self._armed.get(equipment_id)
        if record is None:
            raise NotFound("No timed action is armed on this equipment")
        if revert:
            self._sending.add(equipment_id)
            try:
                self._orders.execute(equipment_id, record.alias, record.revert_value, self._revert_source(user_id))
            finally:
                self._sending.discard(equipment_id)
        self._remove(record)
        self._announce(equipment_id)

    # ---- expiry ------------------------------------------------------------------------------
    def _expire(self, record: Armed) -> None:
        if self._stopped or self._armed.get(record.equipment_id) is not record:
            return  # replaced or ended meanwhile
        record.timer = None
        if self._must_wait(record):
            return
        self._remove(record)
        equipment = self._equipments.get(record.equipment_id)
        name = equipment.name if equipment else record.equipment_id
        self._sending.add(record.equipment_id)
        try:
            self._orders.execute(record.equipment_id, record.alias, record.revert_value, self._revert_source(record.armed_by))
        except Exception as error:
            message = error.message if isinstance(error, ApiError) else str(error)
            log.warning("timed action on %s: revert not sent (%s); dropped", name, message)
            self._alarms.raise_alarm(
                record.alarm_id, "error", ALARM_SOURCE, f"Timed action revert not sent: {name} {record.alias} → {record.revert_value} ({message})", remind=True
            )
        else:
            log.info("timed action on %s expired: %s → %r", name, record.alias, record.revert_value)
            self._alarms.resolve(record.alarm_id, f"Timed action reverted: {name} {record.alias} → {record.revert_value}")
        finally:
            self._sending.discard(record.equipment_id)
        self._announce(record.equipment_id)

    def _must_wait(self, record: Armed) -> bool:
        """Right after a start, a due revert waits for its integration to connect (or the grace end)."""
        if self._grace_until is None or self._clock.now_ms() >= self._grace_until:
            return False
        integration_id = self._integration_of(record)
        if integration_id is None:
            return False
        try:
            if self._integrations.status(integration_id) == "connected":
                return False
        except ApiError:
            return False
        if not record.deferred:
            log.info("timed action on %s due: waiting for %s to connect", record.equipment_id, integration_id)
        record.deferred = True
        record.timer = self._clock.call_at(self._grace_until, lambda: self._worker.submit(self._expire, record))
        return True

    def _integration_of(self, record: Armed) -> str | None:
        equipment = self._equipments.get(record.equipment_id)
        order = self._equipments.order_of(equipment, record.alias) if equipment else None
        return order.device.integration_id if order is not None else None

    def _on_integration_connected(self, event: Event) -> None:
        for record in [r for r in self._armed.values() if r.deferred]:
            if self._integration_of(record) == event.get("integrationId"):
                self._cancel(record)
                self._expire(record)

    @staticmethod
    def _revert_source(user_id: str | None) -> dict[str, Any]:
        return {"kind": "manual", "userId": user_id, "timedAction": True, "revert": True}

    # ---- the bus -----------------------------------------------------------------------------
    def _on_data_changed(self, event: Event) -> None:
        record = self._armed.get(event["equipmentId"])
        if record is None or record.mirror != event["alias"] or record.equipment_id in self._sending:
            return
        if record.own_echo:
            record.own_echo = False
            if values_match(record.value, event["value"]):
                return  # the echo of our own send
        if record.revert_value is None or not values_match(record.revert_value, event["value"]):
            return
        log.info("timed action on %s: reverted by hand (%s = %r), disarmed", record.equipment_id, record.mirror, event["value"])
        self._remove(record)
        self._announce(record.equipment_id)

    def _on_equipment_removed(self, event: Event) -> None:
        record = self._armed.get(event["equipmentId"])
        if record is not None:
            self._remove(record)
        if self._alarms.is_active(f"timed-revert:{event['equipmentId']}"):
            self._alarms.resolve(f"timed-revert:{event['equipmentId']}", f"Equipment removed: {event.get('equipmentName')}")

    # ---- storage and timers ------------------------------------------------------------------
    def _schedule(self, record: Armed) -> None:
        self._cancel(record)
        record.timer = self._clock.call_at(record.expires_at, lambda: self._worker.submit(self._expire, record))

    @staticmethod
    def _cancel(record: Armed) -> None:
        record.deferred = False
        if record.timer is not None:
            record.timer.cancel()
            record.timer = None

    def _save(self, record: Armed) -> None:
        fields = {
            "alias": record.alias, "value": record.value, "revert_value": record.revert_value, "duration_ms": record.duration_ms,
            "armed_at": record.armed_at, "armed_by": record.armed_by, "expires_at": record.expires_at,
        }  # fmt: skip
        with orm.db_session:
            row = self._db.TimedAction.get(equipment_id=record.equipment_id)
            if row is None:
                self._db.TimedAction(equipment_id=record.equipment_id, **fields)
            else:
                row.set(**fields)

    def _remove(self, record: Armed) -> None:
        self._cancel(record)
        if self._armed.get(record.equipment_id) is record:
            del self._armed[record.equipment_id]
        with orm.db_session:
            row = self._db.TimedAction.get(equipment_id=record.equipment_id)
            if row is not None:
                row.delete()

    def _announce(self, equipment_id: str) -> None:
        equipment = self._equipments.get(equipment_id)
        if equipment is not None:
            self._bus.emit("equipment.updated", equipment=self._equipments.to_json(equipment), previousZoneId=equipment.zone_id)
