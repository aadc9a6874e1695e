"""The synchronous in-process event bus.

Events are plain dicts ``{"type": name, **payload}``: the WebSocket hub sends them as they are. A
handler that raises is logged and never propagated, so one faulty subscriber cannot break the
pipeline that emitted the event.

Handlers subscribed here run inline, inside ``emit``: they are views, in memory, and never wait.
Anything that may wait subscribes through a worker (``core/workers.py``).

Each domain declares the payload of its events as a ``TypedDict`` (``<domain>/events.py``, given
to ``declare``). A strict bus (every test runs one) checks each emitted payload against it: a
missing field or an undeclared one fails the emitter at once, so handlers can rely on the fields.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import Any, Callable, Mapping

from hausbox.core.events import ALL_EVENTS

Event = dict[str, Any]
Handler = Callable[[Event], None]

log = logging.getLogger("hausbox.event-bus")


class EventBus:
    def __init__(self, strict: bool = False) -> None:
        self._handlers: dict[str, tuple[Handler, ...]] = defaultdict(tuple)
        self._any: tuple[Handler, ...] = ()
        self._payloads: dict[str, type] = {}
        self.strict = strict

    def declare(self, payloads: Mapping[str, type]) -> None:
        """Declare the payload ``TypedDict`` of event types (a domain's ``EVENTS``)."""
        for event_type, payload in payloads.items():
            _check_type(event_type)
            if self._payloads.get(event_type, payload) is not payload:
                raise ValueError(f"event payload declared twice: {event_type}")
            self._payloads[event_type] = payload

    def payload_of(self, event_type: str) -> type | None:
        return self._payloads.get(event_type)

    def on(self, event_type: str, handler: Handler) -> Callable[[], None]:
        """Subscribe ``handler`` to one event type; returns the function that unsubscribes it."""
        _check_type(event_type)
        self._handlers[event_type] = self._handlers[event_type] + (handler,)

        def off() -> None:
            self._handlers[event_type] = tuple(h for h in self._handlers[event_type] if h is not handler)

        return off

    def on_any(self, handler: Handler) -> Callable[[], None]:
        """Observe every event, before the type-specific handlers; returns the unsubscriber."""
        self._any = self._any + (handler,)

        def off() -> None:
            self._any = tuple(h for h in self._any if h is not handler)

        return off

    def emit(self, event_type: str, **payload: Any) -> Event:
        """Deliver the event to every subscriber, in subscription order, and return it."""
        _check_type(event_type)
        if self.strict:
            check_payload(event_type, self._payloads.get(event_type), payload)
        event: Event = {"type": event_type, **payload}
        # Observers (on_any: the WebSocket hub, history, publishers) come first, so that they see
        # events in emission order: a device update before the equipment change it causes.
        # Tuples are replaced, never mutated, so a handler may (un)subscribe during delivery.
        for handler in self._any + self._handlers.get(event_type, ()):
            try:
                handler(event)
            except Exception:
                if event_type != "log.entry":  # logging a log-stream failure would loop
                    log.exception("handler %s failed on %s", getattr(handler, "__qualname__", handler), event_type)
        return event


def check_payload(event_type: str, declared: type | None, payload: Mapping[str, Any]) -> None:
    """Raise ``TypeError`` when ``payload`` is not what ``declared`` (a TypedDict) says."""
    if declared is None:
        raise TypeError(f"{event_type}: no payload declared (add it to the domain's events.py)")
    required: frozenset[str] = declared.__required_keys__  # type: ignore[attr-defined]
    optional: frozenset[str] = declared.__optional_keys__  # type: ignore[attr-defined]
    missing = required - payload.keys()
    unknown = payload.keys() - required - optional
    if missing or unknown:
        raise TypeError(f"{event_type}: payload missing {sorted(missing)}, undeclared {sorted(unknown)}")


def _check_type(event_type: str) -> None:
    if event_type not in ALL_EVENTS:
        raise ValueError(f"unknown event type: {event_type}")
