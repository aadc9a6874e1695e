"""Notification publishers (telegram, webhook, web push) and users' push subscriptions."""

from __future__ import annotations

from typing import Any

from hausbox.core.components import Component
from hausbox.notifications import events, models
from hausbox.notifications.service import NotificationService


def setup(engine) -> None:  # noqa: ANN001
    engine.redactor.add_secret(engine.secrets.vapid_private_key)

    def current_value(source_type: str, source_id: str, key: str) -> Any:
        if source_type == "equipment":
            equipment = engine.equipments.get(source_id)
            return equipment.data.get(key) if equipment is not None else None
        if source_type == "zone":
            return (engine.aggregator.data(source_id) or {}).get(key)
        recipes = getattr(engine, "recipes", None)
        instance = recipes.get_instance(source_id) if recipes is not None else None
        return (instance or {}).get("state", {}).get(key) if instance else None

    def source_exists(source_type: str, source_id: str) -> bool:
        if source_type == "equipment":
            return engine.equipments.get(source_id) is not None
        if source_type == "zone":
            return engine.zones.exists(source_id)
        recipes = getattr(engine, "recipes", None)
        return recipes is not None and recipes.get_instance(source_id) is not None

    engine.notifications = NotificationService(
        engine.db, engine.bus, engine.workers.create("notifications"), engine.clock, engine.workers.gate, engine.redactor.add_secret,
        engine.secrets.vapid_private_key, current_value, source_exists,
    )  # fmt: skip


COMPONENT = Component(
    name="notifications",
    requires=("auth", "equipments", "zonecontrol", "recipes"),
    entities=models.define_entities,
    migrations="hausbox.notifications.migrations",
    routes="hausbox.notifications.routes",
    events=events.EVENTS,
    setup=setup,
    start=lambda engine: engine.notifications.start(),
    disconnect=lambda engine: engine.notifications.stop(),
)
