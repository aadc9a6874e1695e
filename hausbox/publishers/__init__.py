"""MQTT publishers: house values (equipment data, zone aggregates, recipe state) sent to MQTT brokers."""
