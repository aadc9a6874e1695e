"""core/database: versioned migrations, upgrade of an old database by a real server, and refusal of
a database written by a newer release."""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import closing

import bcrypt
import pytest
from pony import orm

from hausbox.core import database
from hausbox.core import settings as settings_module
from hausbox.core.database import SchemaTooNew, available_migrations, migrate

NEWEST = available_migrations()[-1][0]


def sql(path, statement: str, *params) -> list[tuple]:
    """Run one statement on its own connection (committed, then closed) and return the rows."""
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        return conn.execute(statement, params).fetchall()


def tables(path) -> set[str]:
    return {row[0] for row in sql(path, "SELECT name FROM sqlite_master WHERE type = 'table'")}


def versions(path) -> list[int]:
    return [row[0] for row in sql(path, "SELECT version FROM schema_migrations ORDER BY version")]


def journal_mode(path) -> str:
    return sql(path, "PRAGMA journal_mode")[0][0]


# ---- in process ----------------------------------------------------------------------------------


def test_shipped_migrations_are_numbered_from_1_without_gaps():
    shipped = available_migrations()
    assert [version for version, _, _ in shipped] == list(range(1, len(shipped) + 1))
    assert shipped[0][1] == "core" and shipped[1][1] == "api_tokens"
    assert all(sql.strip() for _, _, sql in shipped)


def test_migrate_up_to_builds_an_old_schema_then_the_rest(tmp_path):
    path = tmp_path / "sub" / "hausbox.db"  # the parent folder is created
    assert migrate(path, up_to=1) == 1
    assert {"users", "sessions", "settings", "schema_migrations"} <= tables(path)
    assert "api_tokens" not in tables(path)
    assert versions(path) == [1]

    assert migrate(path) == NEWEST
    assert "api_tokens" in tables(path)
    assert versions(path) == list(range(1, NEWEST + 1))
    names = [row[0] for row in sql(path, "SELECT name FROM schema_migrations ORDER BY version")]
    stamps = [row[0] for row in sql(path, "SELECT applied_at FROM schema_migrations")]
    assert names[:2] == ["core", "api_tokens"]
    assert all(abs(stamp - time.time() * 1000) < 60_000 for stamp in stamps)


def test_migrate_is_idempotent_and_sets_wal(tmp_path):
    path = tmp_path / "hausbox.db"
    assert migrate(path) == NEWEST
    assert migrate(path) == NEWEST
    assert versions(path) == list(range(1, NEWEST + 1))
    assert journal_mode(path) == "wal"


def test_a_newer_schema_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "hausbox.db"
    migrate(path, up_to=1)
    sql(path, "INSERT INTO schema_migrations VALUES (999, 'from_the_future', 0)")
    with pytest.raises(SchemaTooNew, match=rf"database schema version 999 is newer than this release knows \({NEWEST}\)"):
        migrate(path)
    assert versions(path) == [1, 999]  # the pending migrations were not applied either
    assert "api_tokens" not in tables(path)


def test_a_failing_migration_is_rolled_back_and_not_recorded(tmp_path, monkeypatch):
    path = tmp_path / "hausbox.db"
    shipped = available_migrations()
    broken = (NEWEST + 1, "broken", "CREATE TABLE half_done (x INTEGER);\nINSERT INTO no_such_table VALUES (1);\n")
    monkeypatch.setattr(database, "available_migrations", lambda: shipped + [broken])
    with pytest.raises(sqlite3.OperationalError, match="no_such_table"):
        migrate(path)
    assert versions(path) == list(range(1, NEWEST + 1))  # the good ones before it are kept
    assert "half_done" not in tables(path)


def test_statements_split_on_complete_statements_only():
    sql = (
        "-- a comment; with a semicolon\n"
        "CREATE TABLE a (x TEXT DEFAULT 'semi;colon');\n"
        "\n"
        "CREATE TABLE b (y INTEGER); -- trailing comment\n"
        "-- final comment\n"
    )
    statements = [s.strip() for s in database._statements(sql)]
    assert len(statements) == 2
    assert "semi;colon" in statements[0] and statements[0].endswith(";")
    assert statements[1].startswith("CREATE TABLE b")


def test_connections_use_the_durability_pragmas(tmp_path):
    path = tmp_path / "hausbox.db"
    migrate(path)
    conn = database.connect(path)
    try:
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 10000
    finally:
        conn.close()
    db = database.open_database(path, [settings_module.define_entities])
    try:
        with orm.db_session:
            assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
            assert db.execute("PRAGMA synchronous").fetchone()[0] == 2
            assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        db.disconnect()


def test_pony_checks_the_migrated_tables_and_never_creates_them(tmp_path, monkeypatch):
    path = tmp_path / "hausbox.db"
    # Only migration 1: the settings table exists, so the settings entity maps.
    monkeypatch.setattr(database, "available_migrations", lambda: available_migrations()[:1])
    db = database.open_database(path, [settings_module.define_entities])
    db.disconnect()

    def define_missing(db):
        class Missing(db.Entity):
            _table_ = "not_migrated"
            key = orm.PrimaryKey(str)

    with pytest.raises(Exception, match="not_migrated"):
        database.open_database(path, [define_missing])
    assert "not_migrated" not in tables(path)


# ---- a real server on an old database ------------------------------------------------------------


def test_a_server_upgrades_an_old_database_and_keeps_its_data(make_server, tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("old") / "hausbox"
    path = data_dir / "hausbox.db"
    assert migrate(path, up_to=1) == 1
    now = int(time.time() * 1000)
    hashed = bcrypt.hashpw(b"legacy-password-1", bcrypt.gensalt(4)).decode()
    sql(
        path,
        "INSERT INTO users (id, username, username_key, display_name, password_hash, role, enabled, preferences,"
        " created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'admin', 1, ?, ?, ?)",
        "legacy-user", "Legacy", "legacy", "Legacy Owner", hashed, json.dumps({"language": "de"}), now, now,
    )
    sql(
        path,
        "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?), (?, ?, ?)",
        "home.latitude", "48.85", now, "ui.greeting", '"Hallo"', now,
    )
    # The old database was not in WAL mode: the server must switch it.
    assert sql(path, "PRAGMA journal_mode = DELETE")[0][0] == "delete"
    assert journal_mode(path) == "delete"

    server = make_server(data_dir=data_dir)

    assert versions(path) == list(range(1, NEWEST + 1))
    assert "api_tokens" in tables(path)
    assert journal_mode(path) == "wal"

    api = server.api()
    assert api.get("/auth/status").json() == {"setupRequired": False}
    login = api.post("/auth/login", {"username": "LEGACY", "password": "legacy-password-1"})
    assert login.status_code == 200, login.text
    user = login.json()["user"]
    assert user["id"] == "legacy-user" and user["role"] == "admin" and user["displayName"] == "Legacy Owner"
    assert user["preferences"] == {"language": "de"}
    admin = server.api(login.json()["accessToken"])

    settings = admin.get("/settings")
    assert settings.status_code == 200, settings.text
    assert settings.json()["home.latitude"] == 48.85
    assert settings.json()["ui.greeting"] == "Hallo"
    # A table from a later migration is usable.
    assert admin.post("/me/tokens", {"name": "after upgrade"}).status_code == 201
    assert "applied migration 0002_api_tokens" in (data_dir / "logs" / "hausbox.log").read_text()

    # A second start has nothing to apply.
    server.restart()
    assert versions(path) == list(range(1, NEWEST + 1))
    assert server.api().post("/auth/login", {"username": "legacy", "password": "legacy-password-1"}).status_code == 200


def test_a_server_refuses_a_database_from_a_newer_release(make_server, tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("future") / "hausbox"
    path = data_dir / "hausbox.db"
    migrate(path)
    sql(path, "INSERT INTO schema_migrations VALUES (?, 'from_the_future', 0)", NEWEST + 7)
    server = make_server(data_dir=data_dir, start=False)

    started = time.monotonic()
    with pytest.raises(RuntimeError, match="server exited with"):
        server.start()
    assert time.monotonic() - started < 15  # it exits, it does not hang
    assert server.process.returncode != 0
    output = server.output()
    assert "refusing to start" in output and "Traceback" not in output
    assert f"database schema version {NEWEST + 7} is newer than this release knows ({NEWEST})" in output
    assert versions(path) == list(range(1, NEWEST + 1)) + [NEWEST + 7]
