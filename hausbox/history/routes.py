"""Routes: /history (status, retention, binding overrides, sparklines, aliases, series)."""

from __future__ import annotations

from typing import Any

from hausbox.api.routing import Call, Route
from hausbox.api.schema import Schema
from hausbox.core.errors import BadRequest, NotFound
from hausbox.history import query, rules

HISTORIZE_BODY: Schema = {"type": "object", "required": ["historize"], "properties": {"historize": {"enum": [None, 0, 1]}}}


def get_status(call: Call) -> dict[str, Any]:
    return call.engine.history.status()


def get_retention(call: Call) -> dict[str, Any]:
    return call.engine.history_jobs.status()


def get_bindings(call: Call, equipmentId: str) -> list[dict[str, Any]]:
    equipments = call.engine.equipments
    equipment = equipments.require(equipmentId)
    out = []
    for binding in equipment.data_bindings.values():
        datum = equipments.datum_of(equipment, binding.alias)
        category = datum.category if datum else None
        out.append({
            "bindingId": binding.id, "alias": binding.alias, "category": category, "type": datum.type if datum else None,
            "historize": binding.historize, "effectiveOn": rules.is_historized(binding.historize, binding.alias, category),
        })  # fmt: skip
    return out


def put_binding(call: Call, equipmentId: str, bindingId: str) -> dict[str, Any]:
    historize = call.body["historize"]  # the schema let only null, 0 and 1 (or 0.0, 1.0) through
    call.engine.equipments.set_historize(equipmentId, bindingId, None if historize is None else int(historize))
    return {"success": True}


def get_zone_sparkline(call: Call, zoneId: str, category: str) -> dict[str, Any]:
    engine = call.engine
    engine.zones.get(zoneId)
    keys = []
    for equipment in engine.equipments.in_zone(zoneId):
        for binding in equipment.data_bindings.values():
            datum = engine.equipments.datum_of(equipment, binding.alias)
            if datum is not None and datum.category == category and binding.alias != "setpoint":
                keys.append((equipment.id, binding.alias))
    return {"values": query.sparkline(engine.history.store, keys, engine.clock.now_ms())}


def get_sparkline(call: Call, equipmentId: str, alias: str) -> dict[str, Any]:
    engine = call.engine
    engine.equipments.require(equipmentId)
    return {"values": query.sparkline(engine.history.store, [(equipmentId, alias)], engine.clock.now_ms())}


def get_aliases(call: Call, equipmentId: str) -> dict[str, Any]:
    engine = call.engine
    engine.equipments.require(equipmentId)
    return {"aliases": engine.history.store.aliases_since(equipmentId, engine.clock.now_ms() - query.ALIASES_SPAN_MS)}


def get_series(call: Call, equipmentId: str, alias: str) -> dict[str, Any]:
    engine = call.engine
    equipment = engine.equipments.require(equipmentId)
    if alias not in equipment.data_bindings:
        raise NotFound(f"Data binding not found: {alias}")
    datum = engine.equipments.datum_of(equipment, alias)
    category, data_type = (datum.category, datum.type) if datum else (None, "number")
    now = engine.clock.now_ms()
    start = query.parse_time(call.query.get("from"), now, "from", now - query.SPARKLINE_SPAN_MS)
    end = query.parse_time(call.query.get("to"), now, "to", now)
    if end <= start:
        raise BadRequest("to must be after from")
    discrete = data_type in ("boolean", "enum", "text")
    resolution = query.resolution_for(call.query.get("aggregation") or "auto", end - start, category, alias, discrete)
    points = query.series(engine.history.store, engine.clock.tz, (equipmentId, alias), start, end, resolution, data_type, category)
    return {"points": points, "resolution": resolution, "dataType": data_type, "category": category}


# Order matters where a literal segment and a parameter share a place: the literal routes come first.
ROUTES = [
    Route("GET", "/history/status", get_status, summary="The history store's and the export's state, historized bindings and 24 h statistics"),
    Route("GET", "/history/retention", get_retention, summary="The tiers with their retention, and the downsampling and retention jobs' last runs"),
    Route("GET", "/history/bindings/<equipmentId>", get_bindings, summary="The history setting of each data binding of an equipment"),
    Route("PUT", "/history/bindings/<equipmentId>/<bindingId>", put_binding, body=HISTORIZE_BODY, summary="Override whether a data binding is historized (null: the rules decide)"),
    Route("GET", "/history/sparkline/zone/<zoneId>/<category>", get_zone_sparkline, summary="A zone's 24 h sparkline of one category (its own equipments)"),
    Route("GET", "/history/sparkline/<equipmentId>/<alias>", get_sparkline, summary="An equipment binding's 24 h sparkline (means over 30 minutes)"),
    Route("GET", "/history/<equipmentId>", get_aliases, summary="The aliases of an equipment with history over the last 30 days"),
    Route("GET", "/history/<equipmentId>/<alias>", get_series, summary="A time series: from (-24h, -7d, ISO), to, aggregation raw, 1h, 1d or auto"),
]
