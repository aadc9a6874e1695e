"""Energy: the tariff and its peak/off-peak classification, and the energy status."""

from hausbox.core.components import Component
from hausbox.energy.service import TariffService


def setup(engine) -> None:  # noqa: ANN001
    engine.tariff = TariffService(engine.settings, engine.bus, engine.clock)


COMPONENT = Component(name="energy", requires=("equipments",), routes="hausbox.energy.routes", setup=setup)
