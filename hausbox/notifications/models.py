"""Database entities of the notification domain (tables from migration 0014)."""

from __future__ import annotations

from pony import orm


def define_entities(db: orm.Database) -> None:
    class NotificationPublisher(db.Entity):
        _table_ = "notification_publishers"
        id = orm.PrimaryKey(str)
        name = orm.Required(str)
        channel_type = orm.Required(str)
        channel_config = orm.Required(orm.Json)
        enabled = orm.Required(bool, default=True)
        forward_alarms = orm.Required(bool, default=False)
        created_at = orm.Required(int, size=64)
        updated_at = orm.Required(int, size=64)

    class NotificationMapping(db.Entity):
        _table_ = "notification_mappings"
        id = orm.PrimaryKey(str)
        publisher_id = orm.Required(str)
        message = orm.Required(str)
        source_type = orm.Required(str)
        source_id = orm.Required(str)
        source_key = orm.Required(str)
        throttle_ms = orm.Required(int, size=64)
        created_at = orm.Required(int, size=64)

    class PushSubscription(db.Entity):
        _table_ = "push_subscriptions"
        id = orm.PrimaryKey(str)
        user_id = orm.Required(str)
        endpoint = orm.Required(str, unique=True)
        p256dh = orm.Required(str)
        auth = orm.Required(str)
        created_at = orm.Required(int, size=64)
