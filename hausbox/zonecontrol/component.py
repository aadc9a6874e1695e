"""Zone control: aggregation up the tree, zone orders."""

from hausbox.core.components import Component
from hausbox.zonecontrol import events
from hausbox.zonecontrol.aggregation import ZoneAggregator
from hausbox.zonecontrol.orders import ZoneOrders


def setup(engine) -> None:  # noqa: ANN001
    equipments = engine.equipments
    engine.aggregator = ZoneAggregator(engine.bus, engine.zones, equipments, equipments.is_online, root_extras=engine.sunlight.snapshot)
    engine.zone_orders = ZoneOrders(engine.zones, equipments, engine.orders)


COMPONENT = Component(name="zonecontrol", events=events.EVENTS, requires=("equipments", "system", "zones"), routes="hausbox.zonecontrol.routes", setup=setup)
