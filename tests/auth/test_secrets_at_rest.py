"""Secrets at rest: bcrypt password hashes, and only sha256 digests of refresh and API tokens."""

import hashlib
import sqlite3

from tests.harness import PASSWORD

OTHER_PASSWORD = "rest-password-913"


def rows(server, table):
    conn = sqlite3.connect(f"file:{server.data_dir / 'hausbox.db'}?mode=ro", uri=True, timeout=10)
    try:
        conn.row_factory = sqlite3.Row
        return [dict(row) for row in conn.execute(f"SELECT * FROM {table}")]
    finally:
        conn.close()


def sha256(text):
    return hashlib.sha256(text.encode()).hexdigest()


def test_passwords_and_tokens_are_stored_hashed(home):
    user, api = home.new_user("standard", password=OTHER_PASSWORD)
    pairs = [home.admin_pair, home.login("admin"), home.login(user["username"], OTHER_PASSWORD)]
    rotated = home.server.api().post("/auth/refresh", {"refreshToken": pairs[-1]["refreshToken"]}).json()
    pairs.append(rotated)
    api_token = api.post("/me/tokens", {"name": "at-rest"}).json()["token"]
    secrets = [PASSWORD, OTHER_PASSWORD, api_token, api_token[4:]]
    secrets += [pair[kind] for pair in pairs for kind in ("accessToken", "refreshToken")]

    users = rows(home.server, "users")
    sessions = rows(home.server, "sessions")
    tokens = rows(home.server, "api_tokens")
    assert {"admin", user["username"]} <= {row["username"] for row in users}
    for row in users:
        assert row["password_hash"].startswith("$2b$"), row["username"]
        assert len(row["password_hash"]) == 60

    every_cell = [str(value) for table in (users, sessions, tokens) for row in table for value in row.values()]
    for secret in secrets:
        assert not any(secret in cell for cell in every_cell), "a secret is stored in clear"

    # What is stored is the sha256 hex digest.
    session_hashes = {row["token_hash"] for row in sessions}
    assert sha256(rotated["refreshToken"]) in session_hashes
    assert sha256(pairs[1]["refreshToken"]) in session_hashes
    assert all(len(h) == 64 and int(h, 16) >= 0 for h in session_hashes)
    assert sha256(api_token) in {row["token_hash"] for row in tokens}


def test_no_secret_anywhere_in_the_database_files(home):
    password = "raw-file-password-55"
    user, api = home.new_user("standard", password=password)
    pair = home.login(user["username"], password)
    api_token = api.post("/me/tokens", {"name": "raw"}).json()["token"]
    raw = b""
    for path in sorted(home.server.data_dir.glob("hausbox.db*")):
        raw += path.read_bytes()
    assert raw, "database files not found"
    for secret in (password, api_token, pair["refreshToken"], pair["accessToken"]):
        assert secret.encode() not in raw
