"""Local backups: ``engine.backups.create_local`` (called by the update code) writes a full ZIP named
for the target version and keeps the 3 newest; listed newest first; restored by name, and a name
that leaves the folder (or names nothing) is a 400."""

from __future__ import annotations

import json
import os
import re
import zipfile

import pytest

NAME = re.compile(r"^hausbox-backup-pre-v(\d+\.\d+\.\d+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.zip$")


@pytest.fixture
def house(make_house):
    house = make_house()
    house.start()
    return house


def call(house, method: str, path: str, body=None) -> tuple[int, dict]:
    status, _headers, raw = house.api(method, path, body)
    return status, json.loads(raw)


def test_create_local_writes_a_full_zip_and_keeps_the_three_newest(house):
    house.zone("Salon")
    made = [house.engine.backups.create_local(version) for version in ("1.0.0", "1.1.0", "1.2.0", "2.0.0")]
    folder = house.data_dir / "backups"
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    kept = sorted(p.name for p in folder.iterdir())
    assert sorted(p.name for p in made[1:]) == kept and not made[0].exists()
    assert all(NAME.match(name) for name in kept) and not list(folder.glob("*.tmp"))
    with zipfile.ZipFile(made[-1]) as zipped:
        names = set(zipped.namelist())
    assert {"hausbox-backup.json", "data/secrets.json", "history/raw.csv"} <= names and "data/instance.json" not in names
    status, listing = call(house, "GET", "/backup/local")
    assert status == 200
    assert [b["filename"] for b in listing["backups"]] == [p.name for p in reversed(made[1:])]  # newest first
    first = listing["backups"][0]
    assert first["size"] == made[-1].stat().st_size and first["createdAt"].endswith("Z")
    with pytest.raises(ValueError):
        house.engine.backups.create_local("../1.0")


@pytest.mark.parametrize("filename", ["../secrets.json", "..", "a/b.zip", "a\\b.zip", "/etc/passwd", "missing.zip", "", "link.zip", "folder"])
def test_restore_local_refuses_a_name_that_leaves_the_folder_or_names_nothing(house, filename):
    house.engine.backups.create_local("1.0.0")
    folder = house.data_dir / "backups"
    os.symlink(house.data_dir / "secrets.json", folder / "link.zip")
    (folder / "folder").mkdir()
    status, body = call(house, "POST", "/backup/restore-local", {"filename": filename})
    assert status == 400 and body["error"], body
    assert not (house.data_dir / "restore-staged").exists()


def test_restore_local_restores_at_the_next_start(house):
    kept = house.zone("Salon")
    assert call(house, "GET", "/zones")[0] == 200  # the admin exists (the house sets one up at its first call): in the backup
    path = house.engine.backups.create_local("1.0.0")
    house.engine.zones.delete(kept)
    house.zone("Cuisine")
    status, body = call(house, "POST", "/backup/restore-local", {"filename": path.name})
    assert status == 200 and body["restartRequired"] is True and body["tables"]["zones"] >= 2, body
    house.restart()
    status, zones = call(house, "GET", "/zones")
    assert status == 200 and "Salon" in json.dumps(zones) and "Cuisine" not in json.dumps(zones), zones


def test_a_backup_holds_the_history_points_still_in_memory_and_in_the_journal(make_house):
    from tests.history.test_writer import START, sensor

    house = make_house(start=START)
    house.engine.settings.set_many({"history.commitIntervalSeconds": 10, "history.minWriteInterval": 0})
    meter = sensor(house)
    house.start()
    house.report("meter", temperature=20.0)
    house.advance(10)  # committed to the journal, not yet in history.db (flushed every half hour)
    house.report("meter", temperature=21.5)  # still in the writer's memory
    assert house.engine.history.pending == 1 and house.engine.history.store.pending == 1
    path = house.engine.backups.create_local("1.0.0")
    with zipfile.ZipFile(path) as zipped:
        rows = zipped.read("history/raw.csv").decode().splitlines()
    assert [row.split(",")[1:] for row in rows[1:]] == [[meter, "temperature", "20.0"], [meter, "temperature", "21.5"]]
