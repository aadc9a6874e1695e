"""Equipments: bindings, orders, delivery confirmation, timed actions, freshness, VMC, cameras."""

from hausbox.core.components import Component
from hausbox.equipments import events, models, timed_command
from hausbox.equipments.camera import CameraProxy
from hausbox.equipments.confirmation import DeliveryConfirmation
from hausbox.equipments.freshness import FreshnessBudget
from hausbox.equipments.listing import EquipmentListing
from hausbox.equipments.manager import EquipmentManager
from hausbox.equipments.orders import OrderService
from hausbox.equipments.timed_actions import TimedActions
from hausbox.equipments.vmc import VmcSpeed


def setup(engine) -> None:  # noqa: ANN001
    db, bus, workers = engine.db, engine.bus, engine.workers
    engine.equipments = equipments = EquipmentManager(db, bus, engine.devices, engine.zones)
    engine.orders = OrderService(bus, equipments, engine.integrations, engine.alarms)
    engine.freshness = FreshnessBudget(bus, engine.devices, engine.integrations.get)
    equipments.binding_decorators.append(engine.freshness.decorate_binding)
    equipments.update_validators.append(timed_command.validate_update)
    engine.confirmation = DeliveryConfirmation(
        bus, workers.create("confirmation"), equipments, engine.devices, engine.orders, engine.alarms, wait_s=engine.config.order_confirm_s
    )
    engine.timed_actions = TimedActions(db, bus, workers.create("timed-actions"), engine.clock, equipments, engine.orders, engine.integrations, engine.alarms)
    engine.vmc = VmcSpeed(equipments, engine.orders)
    engine.camera = CameraProxy(equipments, engine.settings, engine.config.camera_local_addresses)
    bus.on("equipment.removed", lambda event: engine.camera.forget(event["equipmentId"]))
    engine.equipments_view = EquipmentListing(equipments, equipments.is_online, budget_ms=engine.freshness.budget_ms)


def stop(engine) -> None:  # noqa: ANN001
    engine.timed_actions.stop()  # a revert due while stopping is kept for the next start
    engine.confirmation.stop()


COMPONENT = Component(
    name="equipments",
    events=events.EVENTS,
    requires=("devices", "integrations", "zones"),
    entities=models.define_entities,
    routes="hausbox.equipments.routes",
    setup=setup,
    stop=stop,
)
