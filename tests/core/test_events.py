"""Typed events: every event emitted has a declared payload, emitters are checked at emit (strict bus),
and no handler reads a field its event does not declare (checked here, from the code)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from hausbox.core.bus import EventBus
from hausbox.core.components import discover
from hausbox.core.event_payloads import CORE_EVENTS

SOURCE = Path(__file__).resolve().parents[2] / "hausbox"


def declared() -> dict[str, type]:
    payloads = dict(CORE_EVENTS)
    for component in discover():
        payloads.update(component.events)
    return payloads


def fields_of(payload: type) -> set[str]:
    return set(payload.__required_keys__) | set(payload.__optional_keys__) | {"type"}


def modules() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text(), str(path))) for path in sorted(SOURCE.rglob("*.py"))]


def test_every_event_the_code_emits_has_a_declared_payload():
    payloads = declared()
    emitted = {
        (node.args[0].value, f"{path.relative_to(SOURCE)}:{node.lineno}")
        for path, tree in modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "emit"
        and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
    }  # fmt: skip
    assert len(emitted) > 30
    assert [(name, where) for name, where in sorted(emitted) if name not in payloads] == []


def _reads(body: ast.AST, param: str) -> set[str]:
    """Fields read from the event parameter: ``event["k"]`` and ``event.get("k")``."""
    found = set()
    for node in ast.walk(body):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == param and isinstance(node.slice, ast.Constant):
            found.add(node.slice.value)
        if (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == param and node.args and isinstance(node.args[0], ast.Constant)
        ):  # fmt: skip
            found.add(node.args[0].value)
    return found


def handler_reads() -> list[tuple[str, str, set[str]]]:
    """``(event type, where, fields read)`` of every handler subscribed with ``.on("<type>", handler)``."""
    out = []
    for path, tree in modules():
        for cls in [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]:
            methods = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}
            for node in ast.walk(cls):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "on" and len(node.args) >= 2):
                    continue
                if not (isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                    continue
                handler, where = node.args[1], f"{path.relative_to(SOURCE)}:{node.lineno}"
                if isinstance(handler, ast.Lambda) and handler.args.args:
                    out.append((node.args[0].value, where, _reads(handler.body, handler.args.args[0].arg)))
                elif isinstance(handler, ast.Attribute) and isinstance(handler.value, ast.Name) and handler.value.id == "self" and handler.attr in methods:
                    method = methods[handler.attr]
                    if len(method.args.args) >= 2:
                        out.append((node.args[0].value, where, _reads(method, method.args.args[1].arg)))
    return out


def test_no_handler_reads_a_field_its_event_does_not_declare():
    payloads = declared()
    found = handler_reads()
    assert len(found) > 20, "the scan no longer finds the handlers"
    wrong = [(event_type, where, sorted(reads - fields_of(payloads[event_type]))) for event_type, where, reads in found if event_type in payloads]
    assert [w for w in wrong if w[2]] == []


def test_a_strict_bus_refuses_a_payload_that_is_not_the_declared_one():
    bus = EventBus(strict=True)
    bus.declare({name: payload for name, payload in declared().items() if name != "mqtt-broker.created"})  # one left undeclared
    bus.emit("zone.removed", zoneId="z", zoneName="Kitchen")
    with pytest.raises(TypeError, match="missing \\['zoneName'\\]"):
        bus.emit("zone.removed", zoneId="z")
    with pytest.raises(TypeError, match="undeclared \\['colour'\\]"):
        bus.emit("zone.removed", zoneId="z", zoneName="Kitchen", colour="red")
    bus.emit("device.data.updated", deviceId="d", deviceName="n", dataId="x", key="k", value=1, previous=None, timestamp="t")  # sourceTimestamp optional
    with pytest.raises(TypeError, match="no payload declared"):
        bus.emit("mqtt-broker.created", broker={})
