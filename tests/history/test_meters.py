"""Energy readings through the real pipeline: the baseline arbiter and the sums split peak/off-peak."""

from __future__ import annotations

import json

import pytest

from hausbox.devices.discovery import DataSpec
from hausbox.history import buckets
from hausbox.history.meters import MeterArbiter
from tests.inprocess import PARIS, local_ms

START = "2026-06-15 21:00"
OFF_PEAK_NIGHTS = {"schedules": [{"days": [0, 1, 2, 3, 4, 5, 6], "slots": [{"start": "06:00", "end": "22:00", "tariff": "hp"}, {"start": "22:00", "end": "06:00", "tariff": "hc"}]}], "prices": {"hp": 0.25, "hc": 0.15}}


def meter(house, name="linky", unit="kWh", equipment_type="main_energy_meter"):
    device = house.device(name, [DataSpec("energy", "number", "energy", unit), DataSpec("power", "number", "power", "W")])
    return house.equipment(name, equipment_type, [device])


def sums(house, equipment_id, tier="energy_hourly"):
    return house.engine.history.store.energy(tier, equipment_id, "energy", 0, 2**62)


def test_the_arbiter_counts_differences_and_starts_a_new_baseline_on_a_reset():
    arbiter = MeterArbiter({}, 0)
    key = ("eq", "energy")
    assert arbiter.consumed(key, 100.0, "kWh", 1, "d1") == (0.0, (100.0, 1, "d1"))  # the first reading: a baseline only
    assert arbiter.consumed(key, 100.5, "kWh", 2, "d1") == (500.0, (100.5, 2, "d1"))
    assert arbiter.consumed(key, 3.0, "kWh", 3, "d1") == (0.0, None)  # a drop: nothing counted, the baseline kept until told
    assert arbiter.consumed(key, 3.25, "kWh", 4, "d1") == (250.0, (3.25, 4, "d1"))  # replaced: counted from the drop
    assert arbiter.consumed(key, "n/a", "kWh", 5, "d1") == (0.0, None)
    interval = ("eq2", "energy")
    assert arbiter.consumed(interval, 12.0, "Wh", 6, "d1") == (12.0, None)  # a Wh meter gives its interval
    assert arbiter.consumed(interval, -1.0, "Wh", 7, "d1") == (0.0, None)
    metrics = arbiter.metrics({key: {"name": "Linky", "type": "main_energy_meter", "role": "main", "separateSupply": False}})
    [entry] = metrics["meters"]
    assert entry["kind"] == "cumulative" and entry["readings"] == 5 and entry["countedWh"] == 750.0
    assert entry["resets"] == 1 and entry["refused"] == 1 and entry["baseline"]["reading"] == 3.25
    assert entry["transientDrops"] == 0


def test_a_transient_drop_is_counted_from_the_old_index_never_as_a_whole_index():
    arbiter = MeterArbiter({}, 0)
    key = ("plug", "energy")
    arbiter.consumed(key, 150.2, "kWh", 1, "d1")
    assert arbiter.consumed(key, 0.0, "kWh", 2, "d1") == (0.0, None)  # a plug rejoining the network reports 0 once
    assert arbiter.consumed(key, 0.0, "kWh", 3, "d1") == (0.0, None)  # or twice: still nothing told
    wh, baseline = arbiter.consumed(key, 150.3, "kWh", 4, "d1")
    assert (wh, baseline) == (pytest.approx(100.0), (150.3, 4, "d1"))  # its index again: 100 Wh, not 150 kWh
    assert arbiter.consumed(key, 150.3, "kWh", 5, "d1") == (0.0, (150.3, 5, "d1"))
    arbiter.consumed(key, 0.0, "kWh", 6, "d1")  # then really replaced: a new meter that has not turned yet
    assert arbiter.consumed(key, 0.0, "kWh", 7, "d1") == (0.0, None)
    wh, baseline = arbiter.consumed(key, 0.4, "kWh", 8, "d1")
    assert (wh, baseline) == (pytest.approx(400.0), (0.4, 8, "d1"))  # counted from the drop
    [entry] = arbiter.metrics({key: {"name": "Plug", "type": "energy_meter", "role": "submeter", "separateSupply": False}})["meters"]
    assert (entry["transientDrops"], entry["resets"], entry["countedWh"]) == (1, 1, pytest.approx(500.0))
    assert entry["lastResetAt"] == "1970-01-01T00:00:00.006Z"  # when the replaced meter first reported


def test_a_reading_from_another_device_is_a_swapped_meter_a_new_baseline_whatever_its_index():
    arbiter = MeterArbiter({("eq", "energy"): (40.0, 1, None)}, 0)  # kept before sources were recorded
    key = ("eq", "energy")
    assert arbiter.consumed(key, 40.5, "kWh", 2, "old") == (500.0, (40.5, 2, "old"))  # takes the source it sees
    assert arbiter.consumed(key, 9000.0, "kWh", 3, "new") == (0.0, (9000.0, 3, "new"))  # not 8,959.5 kWh
    assert arbiter.consumed(key, 9000.1, "kWh", 4, "new") == (pytest.approx(100.0), (9000.1, 4, "new"))
    arbiter.consumed(key, 2.0, "kWh", 5, "new")  # a drop pending when the meter is swapped again
    assert arbiter.consumed(key, 3.0, "kWh", 6, "newer") == (0.0, (3.0, 6, "newer"))  # lower: a new baseline at once
    assert arbiter.consumed(key, 3.2, "kWh", 7, "newer") == (pytest.approx(200.0), (3.2, 7, "newer"))
    [entry] = arbiter.metrics({key: {"name": "Linky", "type": "main_energy_meter", "role": "main", "separateSupply": False}})["meters"]
    assert (entry["replacements"], entry["resets"], entry["transientDrops"]) == (2, 0, 0)
    assert entry["baseline"] == {"reading": 3.2, "at": "1970-01-01T00:00:00.007Z", "deviceDataId": "newer"}


def test_a_meter_swapped_and_bound_again_counts_from_the_new_meters_first_reading_after_a_restart(make_house):
    house = make_house(start="2026-06-15 10:00")
    linky = meter(house)
    house.start()
    house.report("linky", energy=5000.0)
    house.advance(10)
    house.report("linky", energy=5000.2)  # 200 Wh
    house.advance(10)
    house.restart()  # the old meter's baseline comes back from the store with its device
    house.start()
    # The utility swaps the meter: the user pairs the new one and binds its energy in place of the old.
    new = house.device("linky-2", [DataSpec("energy", "number", "energy", "kWh")])
    [old_binding] = [b for b in house.equipment_json(linky)["dataBindings"] if b["alias"] == "energy"]
    status, _, _ = house.api("DELETE", f"/equipments/{linky}/data-bindings/{old_binding['id']}")
    assert status == 204
    status, _, body = house.api("POST", f"/equipments/{linky}/data-bindings", {"deviceDataId": new.data["energy"].id, "alias": "energy"})
    assert status in (200, 201), body
    house.report("linky-2", energy=12000.0)  # a higher index: nothing consumed yet
    house.advance(10)
    house.report("linky-2", energy=12000.3)  # 300 Wh
    house.advance(10)
    assert sum(hp + hc for _h, hp, hc in sums(house, linky)) == pytest.approx(500.0)
    status, _, body = house.api("GET", "/energy/arbiter/metrics")
    [entry] = [m for m in json.loads(body)["meters"] if m["equipmentId"] == linky and m["alias"] == "energy"]
    assert entry["baseline"]["deviceDataId"] == new.data["energy"].id and entry["baseline"]["reading"] == 12000.3


def test_a_reading_of_the_old_meter_handled_after_its_binding_moved_counts_against_the_old_meter(make_house):
    house = make_house(start="2026-06-15 10:00")
    linky = meter(house)
    new = house.device("linky-2", [DataSpec("energy", "number", "energy", "kWh")])
    house.start()
    house.report("linky", energy=5000.0)
    house.advance(10)
    # The old meter's last reading waits in the history worker's queue while its binding moves.
    house.fake.context.devices.update_data("linky", {"energy": 5000.2})
    equipments = house.engine.equipments
    [old_binding] = [b for b in house.equipment_json(linky)["dataBindings"] if b["alias"] == "energy"]
    equipments.remove_data_binding(linky, old_binding["id"])
    equipments.add_data_binding(linky, new.data["energy"].id, "energy")
    house.report("linky-2", energy=12000.0)
    house.advance(10)
    house.report("linky-2", energy=12000.1)
    house.advance(10)
    assert sum(hp + hc for _h, hp, hc in sums(house, linky)) == pytest.approx(300.0)  # 200 Wh, then 100 Wh


def test_every_reading_counts_even_those_the_write_filter_keeps_out(make_house):
    house = make_house(start=START)
    house.engine.tariff.replace(OFF_PEAK_NIGHTS)
    house.engine.settings.set("history.minWriteInterval", 3_600_000)  # the filter writes one reading an hour
    linky = meter(house)
    house.start()
    for minute in range(0, 121, 10):  # 21:00 to 23:00, +0.1 kWh every 10 min
        house.report("linky", energy=round(1000 + minute / 100, 2))
        house.advance(600)
    raw = house.engine.history.store.raw(linky, "energy")
    assert len(raw) == 3  # 21:00, 22:00, 23:00: the filter kept the others out of the raw points
    t21, t22, t23 = (local_ms(f"2026-06-15 {h}:00") for h in (21, 22, 23))
    assert sums(house, linky) == [
        # 21:10, 21:20, 21:30: windows all hp (300); 21:40: 20 min hp, 10 hc; 21:50: 10 hp, 20 hc
        (t21, pytest.approx(300 + 200 / 3 + 100 / 3), pytest.approx(100 / 3 + 200 / 3)),
        (t22, 0.0, pytest.approx(600.0)),  # six readings, all hc
        (t23, 0.0, pytest.approx(100.0)),
    ]


def test_windows_across_a_slot_bound_are_split_by_minutes(make_house):
    house = make_house(start="2026-06-15 21:40")
    house.engine.tariff.replace(OFF_PEAK_NIGHTS)
    linky = meter(house)
    house.start()
    house.report("linky", energy=10.0)
    house.advance(600)
    house.report("linky", energy=10.3)  # at 21:50: window 21:50-22:20, 10 min hp and 20 min hc
    house.advance(10)
    [(hour, hp, hc)] = sums(house, linky)
    assert hour == local_ms("2026-06-15 21:00")
    assert (hp, hc) == (pytest.approx(100.0), pytest.approx(200.0))
    [(day, day_hp, day_hc)] = sums(house, linky, "energy_daily")
    assert day == buckets.midnight(buckets.local(hour, PARIS).date(), PARIS) and (day_hp, day_hc) == (hp, hc)


def test_a_transient_drop_across_an_unclean_restart_counts_no_whole_index(make_house):
    house = make_house(start="2026-06-15 10:00")
    plug = meter(house, "plug", equipment_type="energy_meter")
    house.start()
    house.report("plug", energy=150.2)
    house.advance(10)
    house.report("plug", energy=0.0)  # committed with the old baseline kept
    house.advance(10)
    house.restart()  # what the arbiter held in memory is gone
    house.start()
    house.report("plug", energy=150.3)
    house.advance(10)
    assert sum(hp + hc for _h, hp, hc in sums(house, plug)) == pytest.approx(100.0)


def test_a_restart_even_unclean_continues_from_the_last_committed_baseline(make_house):
    house = make_house(start="2026-06-15 10:00")
    linky = meter(house)
    house.start()
    house.report("linky", energy=50.0)
    house.advance(10)  # committed: the baseline is 50.0
    house.report("linky", energy=50.2)
    house.advance(10)
    house.restart()
    house.start()
    house.report("linky", energy=50.5)
    house.advance(10)
    assert sum(hp + hc for _h, hp, hc in sums(house, linky)) == pytest.approx(500.0)


def test_a_meter_reset_is_a_new_baseline_and_an_interval_meter_adds_its_readings(make_house):
    house = make_house(start="2026-06-15 10:00")
    linky = meter(house)
    clamp = meter(house, "clamp", unit="Wh", equipment_type="energy_meter")
    house.start()
    for value in (7.0, 7.1, 0.0, 0.05):
        house.report("linky", energy=value)
        house.report("clamp", energy=25)
        house.advance(60)
    assert sum(hp + hc for _h, hp, hc in sums(house, linky)) == pytest.approx(150.0)  # 100 before, 50 after the reset
    assert sum(hp + hc for _h, hp, hc in sums(house, clamp)) == pytest.approx(100.0)
    status, _, _ = house.api("GET", "/history/status")
    assert status == 200
