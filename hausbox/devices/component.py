"""Devices: the in-memory registry on the message path, battery alerts."""

from hausbox.core.components import Component
from hausbox.devices import events, models, snapshot
from hausbox.devices.battery import BatteryMonitor
from hausbox.devices.manager import DeviceManager


def setup(engine) -> None:  # noqa: ANN001
    engine.devices = DeviceManager(engine.db, engine.bus, zone_exists=engine.zones.exists, state_path=engine.config.data_dir / snapshot.FILE_NAME)
    engine.battery = BatteryMonitor(engine.db, engine.workers.create("battery"), engine.devices, engine.alarms)


def start(engine) -> None:  # noqa: ANN001
    engine.devices.start()
    engine.battery.start()


COMPONENT = Component(
    name="devices",
    events=events.EVENTS,
    requires=("zones",),
    entities=models.define_entities,
    routes="hausbox.devices.routes",
    backup_files=(snapshot.FILE_NAME,),
    setup=setup,
    start=start,
    stop=lambda engine: engine.battery.stop(),
    final_write=lambda engine: engine.devices.stop(),  # the values not yet persisted
    checkpoint=lambda engine: engine.devices.flush(),
)
