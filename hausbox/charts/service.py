"""Saved charts: ``{name, config}`` where config is an object the UI reads back as it wrote it.

The route schema checks the members we know (a series' ``color``, ``yAxisFit``); everything else in
config is kept as given.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from pony import orm

from hausbox.core.clock import Clock, iso_utc
from hausbox.core.errors import NotFound

NAME_MAX = 100


class Charts:
    def __init__(self, db: orm.Database, clock: Clock):
        self._db = db
        self._clock = clock

    def list(self) -> list[dict[str, Any]]:
        with orm.db_session:
            return [_json(row) for row in self._db.ChartConfig.select().order_by(lambda c: (c.created_at, c.id))]

    def get(self, chart_id: str) -> dict[str, Any]:
        with orm.db_session:
            return _json(self._require(chart_id))

    def _require(self, chart_id: str) -> Any:
        row = self._db.ChartConfig.get(id=chart_id)
        if row is None:
            raise NotFound(f"Chart not found: {chart_id}")
        return row

    def create(self, name: str, config: dict[str, Any]) -> dict[str, Any]:
        stamp = self._clock.now_ms()
        with orm.db_session:
            row = self._db.ChartConfig(id=str(uuid.uuid4()), name=name.strip(), config=_dump(config), created_at=stamp, updated_at=stamp)
            return _json(row)

    def update(self, chart_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        with orm.db_session:
            row = self._require(chart_id)
            changes: dict[str, Any] = {}
            if "name" in fields:
                changes["name"] = fields["name"].strip()
            if "config" in fields:
                changes["config"] = _dump(fields["config"])
            if changes:
                row.set(updated_at=self._clock.now_ms(), **changes)
            return _json(row)

    def delete(self, chart_id: str) -> None:
        with orm.db_session:
            self._require(chart_id).delete()


def _dump(config: dict[str, Any]) -> str:
    return json.dumps(config, separators=(",", ":"), ensure_ascii=False)


def _json(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "name": row.name,
        "config": json.loads(row.config),
        "createdAt": iso_utc(row.created_at),
        "updatedAt": iso_utc(row.updated_at),
    }
