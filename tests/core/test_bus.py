"""core/bus: ordered synchronous delivery, faulty handlers isolated, typed event names."""

from __future__ import annotations

import logging

import pytest

from hausbox.core.bus import EventBus
from hausbox.core.events import ALL_EVENTS, INTERNAL_EVENTS, PUBLIC_EVENTS


def test_handlers_are_called_in_subscription_order_with_the_event_dict():
    # Observers (on_any) come first, then the type's handlers in subscription order.
    bus = EventBus()
    calls = []
    bus.on("settings.changed", lambda event: calls.append(("first", event)))
    bus.on("settings.changed", lambda event: calls.append(("second", event)))
    bus.on_any(lambda event: calls.append(("any", event)))
    bus.on("zone.removed", lambda event: calls.append(("other type", event)))

    returned = bus.emit("settings.changed", keys=["a", "b"])

    expected = {"type": "settings.changed", "keys": ["a", "b"]}
    assert returned == expected
    assert [name for name, _ in calls] == ["any", "first", "second"]
    assert all(event == expected for _, event in calls)
    # Every handler sees the same object the emitter gets back.
    assert all(event is returned for _, event in calls)


def test_an_event_without_payload_is_just_its_type():
    bus = EventBus()
    seen = []
    bus.on("system.started", seen.append)
    bus.emit("system.started")
    assert seen == [{"type": "system.started"}]


def test_a_raising_handler_is_logged_and_the_others_still_run(caplog):
    bus = EventBus()
    seen = []

    def broken(event):
        raise RuntimeError("boom in handler")

    bus.on("device.heartbeat", lambda event: seen.append("before"))
    bus.on("device.heartbeat", broken)
    bus.on("device.heartbeat", lambda event: seen.append("after"))
    bus.on_any(lambda event: seen.append("any"))

    with caplog.at_level(logging.ERROR, logger="hausbox.event-bus"):
        event = bus.emit("device.heartbeat", deviceId="d1", timestamp=1)  # must not raise

    assert event == {"type": "device.heartbeat", "deviceId": "d1", "timestamp": 1}
    assert seen == ["any", "before", "after"]
    failures = [r for r in caplog.records if r.name == "hausbox.event-bus" and r.levelno >= logging.ERROR]
    assert len(failures) == 1
    assert "device.heartbeat" in failures[0].getMessage()
    assert "broken" in failures[0].getMessage()
    assert failures[0].exc_info is not None and "boom in handler" in str(failures[0].exc_info[1])


def test_a_raising_on_any_handler_does_not_break_emit():
    bus = EventBus()
    seen = []
    bus.on_any(lambda event: 1 / 0)
    bus.on_any(seen.append)
    bus.emit("sunlight.changed")
    assert seen == [{"type": "sunlight.changed"}]


def test_unknown_event_type_raises_value_error():
    bus = EventBus()
    with pytest.raises(ValueError, match="no.such.event"):
        bus.emit("no.such.event")
    with pytest.raises(ValueError, match="device.data.update"):
        bus.on("device.data.update", lambda event: None)  # a typo of device.data.updated


def test_unsubscribe_stops_delivery_and_leaves_the_others():
    bus = EventBus()
    seen = []
    off_a = bus.on("mode.activated", lambda event: seen.append("a"))
    bus.on("mode.activated", lambda event: seen.append("b"))
    off_any = bus.on_any(lambda event: seen.append("any"))

    bus.emit("mode.activated", modeId="m", modeName="M")
    assert seen == ["any", "a", "b"]

    seen.clear()
    off_a()
    off_any()
    bus.emit("mode.activated", modeId="m", modeName="M")
    assert seen == ["b"]

    off_a()  # unsubscribing twice is harmless
    seen.clear()
    bus.emit("mode.activated", modeId="m", modeName="M")
    assert seen == ["b"]


def test_unsubscribe_removes_only_that_handler_even_when_the_same_function_is_on_two_types():
    bus = EventBus()
    seen = []
    handler = seen.append
    off_zone = bus.on("zone.created", handler)
    bus.on("zone.updated", handler)
    off_zone()
    bus.emit("zone.created", zone={})
    bus.emit("zone.updated", zone={})
    assert seen == [{"type": "zone.updated", "zone": {}}]


def test_a_handler_may_unsubscribe_itself_during_delivery():
    bus = EventBus()
    seen = []
    offs = {}

    def once(event):
        seen.append("once")
        offs["once"]()

    offs["once"] = bus.on("activity.added", once)
    bus.on("activity.added", lambda event: seen.append("always"))
    bus.emit("activity.added", item={})
    bus.emit("activity.added", item={})
    assert seen == ["once", "always", "always"]


def test_event_name_sets():
    assert "auth.revoked" in INTERNAL_EVENTS and "auth.revoked" not in PUBLIC_EVENTS
    assert ALL_EVENTS == PUBLIC_EVENTS | INTERNAL_EVENTS
    for name in ("settings.changed", "log.entry", "system.started", "device.data.updated", "equipment.data.changed"):
        assert name in PUBLIC_EVENTS


def test_observers_see_a_cascade_in_emission_order():
    # A typed handler that emits the next event of the pipeline must not make observers (the
    # WebSocket hub, history) see the effect before its cause.
    bus = EventBus()
    observed = []
    bus.on_any(lambda event: observed.append(event["type"]))
    bus.on("device.data.updated", lambda event: bus.emit("equipment.data.changed", equipmentId="e", alias="a", value=1))
    bus.on("equipment.data.changed", lambda event: bus.emit("zone.data.changed", zoneId="z", aggregatedData={}))
    bus.emit("device.data.updated", deviceId="d", key="k", value=1)
    assert observed == ["device.data.updated", "equipment.data.changed", "zone.data.changed"]
