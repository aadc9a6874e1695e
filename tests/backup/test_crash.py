"""A kill -9 in the middle of a restore: during the upload, during the validation, and at each
phase of the apply at start. Afterwards the previous data is intact or the restore complete,
never a mix."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from tests.backup.helpers import add_history, answers, populate, upload
from tests.harness import Home, Server, wait_for

CRASH = "HAUSBOX_TEST_CRASH_AT"


def paths(made: dict[str, Any]) -> list[str]:
    sensor = made["sensor"]["id"]
    return ["/zones", "/equipments", "/users", "/modes", "/recipe-instances", "/charts", "/settings", f"/history/{sensor}/temperature?from=-1d"]


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> dict[str, Any]:
    """A populated home with history, its backup, and what its read routes answer."""
    server = Server(tmp_path_factory.mktemp("source") / "hausbox").start()
    home = Home(server)
    made = populate(home)
    add_history(server, made["sensor"]["id"], made["meter"]["id"])
    archive = home.admin.get("/backup")
    assert archive.headers["Content-Type"] == "application/zip"
    found = {"token": home.admin.token, "archive": archive.content, "paths": paths(made), "answers": answers(home.admin, paths(made))}
    server.kill()
    return found


def other_home(make_server) -> tuple[Home, dict[str, Any]]:
    """The home a restore replaces: its own zones, users and history."""
    home = Home(make_server(env={"SERVICE_TAKEOVER": "1"}))
    made = populate(home)
    add_history(home.server, made["sensor"]["id"], made["meter"]["id"])
    return home, {"paths": paths(made), "answers": answers(home.admin, paths(made))}


def restart(server: Server, env: dict[str, str] | None = None) -> Server:
    """The same data directory, served by a new process (with ``env``'s crash point, if any)."""
    again = Server(server.data_dir, {"SERVICE_TAKEOVER": "1", **(env or {})})
    again.port = server.port
    return again


def test_kill_9_during_an_upload_leaves_the_data_intact(make_server, source):
    home, before = other_home(make_server)
    server = home.server
    with socket.create_connection(("127.0.0.1", server.port)) as connection:
        head = (
            "POST /api/v1/backup HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {home.admin.token}\r\nContent-Type: multipart/form-data; boundary=xyz\r\nContent-Length: {200 << 20}\r\n\r\n"
            '--xyz\r\nContent-Disposition: form-data; name="file"; filename="b.zip"\r\n\r\n'
        )
        connection.sendall(head.encode() + source["archive"][: len(source["archive"]) // 2] + b"\0" * (4 << 20))
        wait_for(lambda: list(server.data_dir.glob("backup-work-*/upload.zip")), timeout=10)
        server.kill()
    again = restart(server).start()
    assert not list(server.data_dir.glob("backup-work-*")) and not (server.data_dir / "restore-staged").exists()
    assert answers(again.api(home.admin.token), before["paths"]) == before["answers"]


def test_kill_9_during_the_validation_leaves_the_data_intact(make_server, source):
    home, before = other_home(make_server)
    home.server.stop()
    crashing = restart(home.server, {CRASH: "restore-stage:built"}).start()
    with pytest.raises(Exception):
        upload(crashing.api(home.admin.token), source["archive"])  # the process dies before it answers
    crashing.process.wait(10)
    assert (home.server.data_dir / "restore-staged.tmp").exists()  # killed with the staging complete, not committed
    again = restart(home.server).start()
    assert not (home.server.data_dir / "restore-staged.tmp").exists() and not (home.server.data_dir / "restore-staged").exists()
    assert answers(again.api(home.admin.token), before["paths"]) == before["answers"]


@pytest.mark.parametrize("phase", ["planned", "aside", "aside-done", "in", "done"])
def test_kill_9_while_a_restore_is_applied_completes_it_at_the_next_start(make_server, source, phase):
    home, _ = other_home(make_server)
    response = upload(home.admin, source["archive"])
    assert response.status_code == 200, response.text
    home.server.stop()
    crashing = restart(home.server, {CRASH: f"restore-apply:{phase}"})
    with pytest.raises(RuntimeError, match="server exited with -9"):
        crashing.start()
    data = home.server.data_dir
    assert (data / "restore-staged").exists() or (data / "restore-staged.done").exists()
    again = restart(home.server).start()
    assert answers(again.api(source["token"]), source["paths"]) == source["answers"]
    assert not (data / "restore-staged").exists() and not (data / "restore-staged.done").exists()
    # what was replaced is kept for inspection, whole
    previous = sorted(p.name for p in (data / "restore-previous").iterdir())
    assert {"hausbox.db", "history.db", "device-state.json.gz", "secrets.json"} <= set(previous)
    assert "instance.json" not in previous and (data / "instance.json").exists()


def test_a_restore_applied_without_a_crash_keeps_the_previous_files(make_server, source):
    home, _ = other_home(make_server)
    old_secrets = (home.server.data_dir / "secrets.json").read_bytes()
    assert upload(home.admin, source["archive"]).status_code == 200
    home.server.restart()
    data = home.server.data_dir
    assert (data / "restore-previous" / "secrets.json").read_bytes() == old_secrets
    assert answers(home.server.api(source["token"]), source["paths"]) == source["answers"]
