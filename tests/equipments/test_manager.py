"""``separateSupply`` and ``requireConfirmation`` on PUT /equipments/:id (spec, Equipment resource)."""

from __future__ import annotations

import json

import pytest

from hausbox.core.errors import BadRequest


@pytest.mark.parametrize("meter_type", ["main_energy_meter", "energy_production_meter", "solar_panel"])
def test_separate_supply_is_refused_on_the_main_meter_and_production_types(house, meter_type):
    meter = house.equipment("Meter", meter_type)
    with pytest.raises(BadRequest) as refused:
        house.engine.equipments.update(meter, {"separateSupply": True})
    assert refused.value.status == 400 and "separateSupply" in refused.value.message
    assert house.engine.equipments.update(meter, {"separateSupply": False})["separateSupply"] is False


def test_separate_supply_is_refused_when_the_same_put_makes_it_a_main_meter(house):
    meter = house.equipment("Garage clamp", "energy_meter")
    with pytest.raises(BadRequest):
        house.engine.equipments.update(meter, {"type": "main_energy_meter", "separateSupply": True})
    assert house.engine.equipments.require(meter).type == "energy_meter"


def test_becoming_a_main_meter_drops_a_separate_supply(house):
    meter = house.equipment("Clamp", "energy_meter")
    assert house.engine.equipments.update(meter, {"separateSupply": True})["separateSupply"] is True
    assert house.engine.equipments.update(meter, {"type": "main_energy_meter"})["separateSupply"] is False


def test_both_flags_default_to_false_and_persist_across_a_restart(house):
    clamp = house.equipment("Garden clamp", "energy_meter")
    gate = house.equipment("Gate", "gate")
    created = house.equipment_json(clamp)
    assert created["separateSupply"] is False and created["requireConfirmation"] is False
    status, _, answer = house.api("PUT", f"/equipments/{clamp}", {"separateSupply": True})
    assert status == 200 and json.loads(answer)["separateSupply"] is True
    status, _, answer = house.api("PUT", f"/equipments/{gate}", {"requireConfirmation": True})
    assert status == 200 and json.loads(answer)["requireConfirmation"] is True
    status, _, answer = house.api("PUT", f"/equipments/{gate}", {"requireConfirmation": "yes"})
    assert status == 400 and "requireConfirmation" in json.loads(answer)["error"]
    status, _, answer = house.api("PUT", f"/equipments/{gate}", {"name": "Front gate"})
    assert json.loads(answer)["requireConfirmation"] is True, "an absent key leaves it"
    house.restart()
    engine = house.engine
    assert engine.equipments.to_json(engine.equipments.require(clamp))["separateSupply"] is True
    reloaded = engine.equipments.to_json(engine.equipments.require(gate))
    assert reloaded["requireConfirmation"] is True and reloaded["name"] == "Front gate"
    assert engine.equipments.update(gate, {"requireConfirmation": False})["requireConfirmation"] is False


def test_the_main_meter_refusal_is_a_json_400_through_the_route(house):
    meter = house.equipment("Main", "main_energy_meter")
    status, _, answer = house.api("PUT", f"/equipments/{meter}", {"separateSupply": True})
    assert status == 400 and "separateSupply" in json.loads(answer)["error"]
