"""Database entities of the MQTT publishers (tables from migration 0013)."""

from __future__ import annotations

from pony import orm


def define_entities(db: orm.Database) -> None:
    class MqttBroker(db.Entity):
        _table_ = "mqtt_brokers"
        id = orm.PrimaryKey(str)
        name = orm.Required(str)
        url = orm.Required(str)
        username = orm.Optional(str, nullable=True)
        password = orm.Optional(str, nullable=True)
        created_at = orm.Required(int, size=64)
        updated_at = orm.Required(int, size=64)

    class MqttPublisher(db.Entity):
        _table_ = "mqtt_publishers"
        id = orm.PrimaryKey(str)
        name = orm.Required(str)
        broker_id = orm.Required(str)
        topic = orm.Required(str)
        enabled = orm.Required(bool, default=True)
        on_change_only = orm.Required(bool, default=False)
        created_at = orm.Required(int, size=64)
        updated_at = orm.Required(int, size=64)

    class MqttPublisherMapping(db.Entity):
        _table_ = "mqtt_publisher_mappings"
        id = orm.PrimaryKey(str)
        publisher_id = orm.Required(str)
        publish_key = orm.Required(str)
        source_type = orm.Required(str)
        source_id = orm.Required(str)
        source_key = orm.Required(str)
        enabled = orm.Required(bool, default=True)
        created_at = orm.Required(int, size=64)
        orm.composite_key(publisher_id, publish_key)
