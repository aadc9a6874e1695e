"""A populated instance backed up, restored into a fresh one (another data directory), restarted:
the same answers on every read route; tokens and passwords still work."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime

from tests.backup.helpers import add_history, answers, differences, entries_of, history_paths, populate, read_paths, upload
from tests.harness import PASSWORD, Home


def test_a_backup_restored_into_a_fresh_instance_answers_every_read_route_the_same(make_server):
    source = Home(make_server())
    made = populate(source)
    add_history(source.server, made["sensor"]["id"], made["meter"]["id"])
    api = source.admin
    paths = read_paths(api, history_paths(made["sensor"]["id"], made["meter"]["id"]))
    before = answers(api, paths)
    assert before[f"/history/{made['sensor']['id']}/temperature?from=-1d"][1]["points"], "the history is in the comparison"

    response = api.get("/backup")
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"] == "application/zip"
    assert response.headers["Content-Disposition"].startswith('attachment; filename="hausbox-backup-')
    entries = entries_of(response.content)
    document = json.loads(entries["hausbox-backup.json"])
    assert document["version"] == 1 and document["exportedAt"] and document["engineVersion"]
    assert {"zones", "equipments", "modes", "recipe_instances", "users", "api_tokens", "sessions", "settings"} <= set(document["tables"])
    assert "schema_migrations" not in document["tables"]
    assert "data/secrets.json" in entries and "data/instance.json" not in entries
    assert not any(name.startswith("data/history") for name in entries)  # the history goes as CSV
    raw = list(csv.reader(io.StringIO(entries["history/raw.csv"].decode())))
    assert raw[0] == ["ts", "equipmentId", "alias", "value"] and len(raw) == 31
    assert len(entries["history/energy-hourly.csv"].decode().splitlines()) == 48

    target = Home(make_server(env={"SERVICE_TAKEOVER": "1"}))  # the restored box takes over: not inert
    restored = upload(target.admin, response.content)
    assert restored.status_code == 200, restored.text
    body = restored.json()
    assert body["success"] is True and body["restartRequired"] is True and body["restoredAt"]
    assert body["tables"]["zones"] == len(document["tables"]["zones"]) and body["historyPoints"] > 0 and body["filesRestored"] >= 1
    target.server.restart()

    after = answers(target.server.api(api.token), paths)  # the source's own access token: same signing key, same session
    # The restored box's own start adds to the feed (a recipe instance started): what the backup held is all there.
    exported_ms = int(datetime.fromisoformat(document["exportedAt"].replace("Z", "+00:00")).timestamp() * 1000)
    feed = after["/activity"][1]
    feed["items"] = [item for item in feed["items"] if item["timestamp"] <= exported_ms]
    assert not (diff := differences(before, after)), json.dumps(diff, indent=1)
    # API tokens and passwords still work, on the restored instance
    assert target.server.api(made["user_token"]).get("/me").json()["id"] == made["user"]["id"]
    assert target.server.api(made["admin_token"]).get("/users").status_code == 200
    assert target.login(made["user"]["username"], PASSWORD)["accessToken"]
    assert target.server.api(source.admin_pair["refreshToken"]).post("/auth/refresh", {"refreshToken": source.admin_pair["refreshToken"]}).status_code == 200
    # the fresh instance's own admin is gone with its database; its marker was left alone
    assert target.server.api().post("/auth/login", {"username": "admin", "password": PASSWORD}).status_code == 200  # the source's admin
    assert (target.server.data_dir / "instance.json").read_bytes() != (source.server.data_dir / "instance.json").read_bytes()


def test_a_json_backup_restores_the_tables(make_server):
    source = Home(make_server())
    zone = source.admin.post("/zones", {"name": "Garage"}).json()
    exported = source.admin.get("/backup")
    assert exported.headers["Content-Type"].startswith("application/json")  # no history at all: JSON
    assert exported.headers["Content-Disposition"].startswith('attachment; filename="hausbox-backup-')
    assert exported.headers["Content-Disposition"].endswith('.json"')
    document = exported.json()
    assert document["version"] == 1 and "engineVersion" not in document and "zones" in document["tables"]

    # The downloaded file itself, uploaded as a form's file like a ZIP, restores too.
    as_file = Home(make_server())
    uploaded = as_file.admin.request("POST", "/backup", files={"file": ("hausbox-backup.json", exported.content, "application/json")})
    assert uploaded.status_code == 200, uploaded.text
    assert uploaded.json()["restartRequired"] is True and uploaded.json()["tables"]["zones"] >= 1

    target = Home(make_server())
    secrets_before = (target.server.data_dir / "secrets.json").read_bytes()
    response = target.admin.post("/backup", document)
    assert response.status_code == 200, response.text
    assert response.json()["historyPoints"] == 0 and response.json()["filesRestored"] == 0
    target.server.restart()
    assert (target.server.data_dir / "secrets.json").read_bytes() == secrets_before  # a JSON backup has none: kept
    pair = target.login("admin")  # the source's admin, same password
    zones = target.server.api(pair["accessToken"]).get("/zones").json()
    assert zone["id"] in json.dumps(zones)


def test_a_restore_leaves_the_audit_trail_as_it_is(make_server):
    # audit_entries is a backup_excludes table: not in a backup, and a restore keeps the rows the
    # live database holds when the restore is applied (the record of the restore itself included).
    source = Home(make_server())
    source.admin.post("/zones", {"name": "Source zone"})
    document = source.admin.get("/backup").json()
    assert "audit_entries" not in document["tables"] and "schema_migrations" not in document["tables"]

    target = Home(make_server(env={"SERVICE_TAKEOVER": "1"}))
    target.admin.post("/zones", {"name": "Target zone"})
    document["tables"]["audit_entries"] = [{"nonsense": True}]  # a backup's rows of it are ignored, never restored
    assert target.admin.post("/backup", document).status_code == 200
    target.server.restart()
    admin = target.server.api(target.login("admin")["accessToken"])
    routes = [(e["method"], e["route"]) for e in admin.get("/audit?limit=200").json()["entries"]]
    assert ("POST", "/zones") in routes and ("POST", "/backup") in routes, routes  # the target's own record, kept
    assert "Source zone" in str(admin.get("/zones").json())
