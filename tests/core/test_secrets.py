"""core/secrets: generated once, kept private on disk, stable across restarts."""

from __future__ import annotations

import json
import os
import stat

from hausbox.core import secrets
from tests.harness import PASSWORD


def mode_of(path):
    return stat.S_IMODE(path.stat().st_mode)


def test_first_load_creates_a_private_file_and_reload_gives_the_same_values(tmp_path):
    first = secrets.load_or_create(tmp_path)
    path = tmp_path / "secrets.json"
    assert path.exists()
    assert mode_of(path) == 0o600
    assert len(first.jwt_signing_key) == 64 and len(first.history_token) == 64
    assert first.jwt_signing_key != first.history_token
    assert json.loads(path.read_text()) == {"jwtSigningKey": first.jwt_signing_key, "historyToken": first.history_token, "vapidPrivateKey": first.vapid_private_key}

    again = secrets.load_or_create(tmp_path)
    assert again == first
    assert not (tmp_path / "secrets.json.tmp").exists()


def test_a_fresh_data_directory_gets_fresh_secrets(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = secrets.load_or_create(tmp_path / "a")
    b = secrets.load_or_create(tmp_path / "b")
    assert a.jwt_signing_key != b.jwt_signing_key


def test_too_open_permissions_are_tightened_and_values_kept(tmp_path):
    first = secrets.load_or_create(tmp_path)
    path = tmp_path / "secrets.json"
    os.chmod(path, 0o644)
    assert secrets.load_or_create(tmp_path) == first
    assert mode_of(path) == 0o600


def test_a_missing_value_is_added_without_touching_the_existing_one(tmp_path):
    path = tmp_path / "secrets.json"
    path.write_text(json.dumps({"jwtSigningKey": "kept-signing-key"}))
    os.chmod(path, 0o600)
    loaded = secrets.load_or_create(tmp_path)
    assert loaded.jwt_signing_key == "kept-signing-key"
    assert len(loaded.history_token) == 64
    assert json.loads(path.read_text()) == {"jwtSigningKey": "kept-signing-key", "historyToken": loaded.history_token, "vapidPrivateKey": loaded.vapid_private_key}
    assert mode_of(path) == 0o600


def test_write_private_replaces_atomically_with_mode_0600(tmp_path):
    path = tmp_path / "private.txt"
    path.write_text("old")
    os.chmod(path, 0o666)
    secrets.write_private(path, "new content")
    assert path.read_text() == "new content"
    assert mode_of(path) == 0o600


def test_tokens_issued_before_a_restart_stay_valid_after_it(make_server):
    server = make_server()
    api = server.api()
    pair = api.post("/auth/setup", {"username": "owner", "password": PASSWORD, "displayName": "Owner"}).json()
    admin = server.api(pair["accessToken"])
    created = admin.post("/me/tokens", {"name": "script"})
    assert created.status_code == 201, created.text
    api_token = created.json()["token"]
    key_before = json.loads((server.data_dir / "secrets.json").read_text())

    assert server.stop() == 0
    server.start()

    assert json.loads((server.data_dir / "secrets.json").read_text()) == key_before
    assert mode_of(server.data_dir / "secrets.json") == 0o600
    me = server.api(pair["accessToken"]).get("/me")
    assert me.status_code == 200, me.text
    assert me.json()["username"] == "owner"
    assert server.api(api_token).get("/me").status_code == 200
    # The refresh token of the old session still works, and a garbage token still does not.
    refreshed = server.api().post("/auth/refresh", {"refreshToken": pair["refreshToken"]})
    assert refreshed.status_code == 200, refreshed.text
    assert server.api("not-a-token").get("/me").status_code == 401
