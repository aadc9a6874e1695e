"""Every way a backup can be wrong: 400 naming the problem, nothing staged, every read route unchanged
(also after a restart: nothing was waiting to be applied). Access: admin only."""

from __future__ import annotations

import http.client
import io
import json
import shutil
import stat
import zipfile
from typing import Any

import pytest

from tests.backup.helpers import add_history, answers, entries_of, populate, read_paths, upload, zip_of
from tests.harness import Home


@pytest.fixture(scope="module")
def home(module_server) -> dict[str, Any]:
    home = Home(module_server)
    made = populate(home)
    add_history(home.server, made["sensor"]["id"], made["meter"]["id"])
    archive = home.admin.get("/backup")
    assert archive.headers["Content-Type"] == "application/zip"
    paths = read_paths(home.admin, [])
    return {"home": home, "made": made, "archive": archive, "paths": paths, "before": answers(home.admin, paths)}


def good_document(home: dict[str, Any]) -> dict[str, Any]:
    return json.loads(entries_of(home["archive"].content)["hausbox-backup.json"])


def with_rows(home: dict[str, Any], table: str, rows: Any) -> dict[str, Any]:
    document = good_document(home)
    document["tables"][table] = rows
    return document


def zone_row(home: dict[str, Any], **changes: Any) -> list[dict[str, Any]]:
    zones = good_document(home)["tables"]["zones"]
    return zones[:-1] + [{**zones[-1], **changes}]


JSON_CASES = {
    "version": (lambda h: {**good_document(h), "version": 2}, "Invalid backup version: 2"),
    "version missing": (lambda h: {"tables": {}}, "Invalid backup version"),
    "tables missing": (lambda h: {"version": 1}, "tables is required"),
    "not an object": (lambda h: [1], "the document must be an object"),
    "tables not an object": (lambda h: {"version": 1, "tables": []}, "tables must be an object"),
    "unknown table": (lambda h: with_rows(h, "nope", []), "Unknown table: nope"),
    "table not an array": (lambda h: with_rows(h, "zones", {}), "Table zones must be an array"),
    "row not an object": (lambda h: with_rows(h, "modes", [1]), "Table modes, row 0: a row must be an object"),
    "unknown column": (lambda h: with_rows(h, "zones", zone_row(h, colour="red")), "unknown column colour"),
    "text in an integer column": (lambda h: with_rows(h, "zones", zone_row(h, display_order="first")), "column display_order: expected a number"),
    "number in a text column": (lambda h: with_rows(h, "zones", zone_row(h, name=12)), "column name: expected text"),
    "boolean": (lambda h: with_rows(h, "zones", zone_row(h, display_order=True)), "column display_order: a bool"),
    "not null": (lambda h: with_rows(h, "zones", zone_row(h, name=None)), "NOT NULL constraint failed: zones.name"),
    "duplicate key": (lambda h: with_rows(h, "zones", good_document(h)["tables"]["zones"] * 2), "UNIQUE constraint failed: zones.id"),
    "foreign key": (lambda h: with_rows(h, "equipments", [{**good_document(h)["tables"]["equipments"][0], "zone_id": "nowhere"}]),
                    "Table equipments, row 0, column zone_id: foreign key to zones does not resolve"),
    "a parent row left out": (lambda h: with_rows(h, "zones", []), "foreign key to zones does not resolve"),
}  # fmt: skip


def assert_unchanged(home: dict[str, Any]) -> None:
    data_dir = home["home"].server.data_dir
    assert not (data_dir / "restore-staged").exists() and not (data_dir / "restore-staged.tmp").exists()
    assert not list(data_dir.glob("backup-work-*"))
    after = answers(home["home"].admin, home["paths"])
    assert {p for p in after if after[p] != home["before"][p] and p != "/activity"} == set()


@pytest.mark.parametrize("case", JSON_CASES, ids=list(JSON_CASES))
def test_a_wrong_json_backup_is_a_400_naming_the_problem(home, case):
    make, message = JSON_CASES[case]
    response = home["home"].admin.post("/backup", make(home))
    assert response.status_code == 400, response.text
    assert message in response.json()["error"]
    assert_unchanged(home)


def link_zip(json_entry: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        out.writestr("hausbox-backup.json", json_entry)
        link = zipfile.ZipInfo("data/secrets.json")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        out.writestr(link, "/etc/passwd")
    return buffer.getvalue()


def crc_broken(entries: dict[str, bytes]) -> bytes:
    data = bytearray(zip_of(entries, zipfile.ZIP_STORED))
    at = data.index(b'"version"')
    data[at + 1] = ord("W")  # the stored bytes no longer match their CRC
    return bytes(data)


def good_entries(home: dict[str, Any]) -> dict[str, bytes]:
    return entries_of(home["archive"].content)


ZIP_CASES = {
    "not a zip": (lambda h: b"this is not a zip archive" * 100, "Not a valid ZIP archive"),
    "truncated": (lambda h: zip_of(good_entries(h))[: len(zip_of(good_entries(h))) // 2], "Not a valid ZIP archive"),
    "crc error": (lambda h: crc_broken(good_entries(h)), "hausbox-backup.json"),
    "no json entry": (lambda h: zip_of({k: v for k, v in good_entries(h).items() if k != "hausbox-backup.json"}), "ZIP missing hausbox-backup.json"),
    "invalid json": (lambda h: zip_of({**good_entries(h), "hausbox-backup.json": b"{nope"}), "Invalid JSON in hausbox-backup.json"),
    "json nested too deep": (lambda h: zip_of({**good_entries(h), "hausbox-backup.json": b"[" * 200_000}), "Invalid JSON in hausbox-backup.json"),
    "dot dot": (lambda h: zip_of({**good_entries(h), "data/../../evil": b"x"}), "Unsafe path in the archive: data/../../evil"),
    "absolute": (lambda h: zip_of({**good_entries(h), "/etc/evil": b"x"}), "Unsafe path in the archive: /etc/evil"),
    "backslash": (lambda h: zip_of({**good_entries(h), "data\\..\\evil": b"x"}), "Unsafe path in the archive"),
    "symlink": (lambda h: link_zip(good_entries(h)["hausbox-backup.json"]), "Link in the archive: data/secrets.json"),
    "instance marker": (lambda h: zip_of({**good_entries(h), "data/instance.json": b"{}"}), "Unexpected entry in the archive: data/instance.json"),
    "export queue": (lambda h: zip_of({**good_entries(h), "data/history-export.db": b""}), "Unexpected entry in the archive: data/history-export.db"),
    "history files": (lambda h: zip_of({**good_entries(h), "data/history.db": b""}), "Unexpected entry in the archive: data/history.db"),
    "unknown entry": (lambda h: zip_of({**good_entries(h), "notes.txt": b"x"}), "Unexpected entry in the archive: notes.txt"),
    "a directory": (lambda h: zip_of({**good_entries(h), "data/": b""}), "Unexpected entry in the archive: data/"),
    "bad version inside": (lambda h: zip_of({**good_entries(h), "hausbox-backup.json": b'{"version": 3, "tables": {}}'}), "Invalid backup version: 3"),
    "bad csv header": (lambda h: zip_of({**good_entries(h), "history/raw.csv": b"when,what\n"}), "history/raw.csv: the header must be ts,equipmentId,alias,value"),
    "bad csv value": (lambda h: zip_of({**good_entries(h), "history/raw.csv": b"ts,equipmentId,alias,value\n1700000000000,e,a,warm\n"}),
                      "history/raw.csv, line 2, column value: not a number"),
    "bad csv time": (lambda h: zip_of({**good_entries(h), "history/hourly.csv": b"ts,equipmentId,alias,min,max,mean,sum,count\nnoon,e,a,1,2,1.5,3,2\n"}),
                     "history/hourly.csv, line 2, column ts: not an integer"),
    "short csv row": (lambda h: zip_of({**good_entries(h), "history/energy-daily.csv": b"ts,equipmentId,alias,hp,hc\n1,e,a,1\n"}),
                      "history/energy-daily.csv, line 2: 4 columns, expected 5"),
    "bad row inside": (lambda h: zip_of({**good_entries(h), "hausbox-backup.json": json.dumps(with_rows(h, "zones", zone_row(h, parent_id="nowhere"))).encode()}),
                       "column parent_id: foreign key to zones does not resolve"),
}  # fmt: skip


@pytest.mark.parametrize("case", ZIP_CASES, ids=list(ZIP_CASES))
def test_a_wrong_archive_is_a_400_naming_the_problem(home, case):
    make, message = ZIP_CASES[case]
    response = upload(home["home"].admin, make(home))
    assert response.status_code == 400, response.text
    assert message in response.json()["error"]
    assert_unchanged(home)


def test_a_zip_bomb_is_refused_by_the_bytes_read_not_the_headers(home, monkeypatch):
    # 2 MB of zeros that claims (in its headers) to be 2 MB, against a bound lowered in process.
    from hausbox.backup import archive

    monkeypatch.setattr(archive, "MAX_UNCOMPRESSED", 1 << 20)
    bomb = zip_of({**good_entries(home), "data/secrets.json": b"\0" * (2 << 20)})
    with zipfile.ZipFile(io.BytesIO(bomb)) as zipped, pytest.raises(archive.ArchiveError, match="unpacks to more than 1 MB"):
        infos = {i.filename: i for i in zipped.infolist()}
        archive.copy_entry(zipped, infos["data/secrets.json"], archive.Budget(archive.MAX_UNCOMPRESSED), io.BytesIO())


def test_bodies_that_are_not_a_backup(home):
    api = home["home"].admin
    assert api.post("/backup", files={"other": ("b.zip", good_entries(home)["hausbox-backup.json"])}).json() == {"error": "The multipart body has no file field"}
    plain = api.post("/backup", data=b"hello", headers={"Content-Type": "text/plain"})
    assert plain.status_code == 400 and "multipart/form-data" in plain.json()["error"]
    malformed = api.post("/backup", data=b"{nope", headers={"Content-Type": "application/json"})
    assert malformed.status_code == 400 and malformed.json()["error"] == "Malformed JSON body"
    deep = api.post("/backup", data=b"[" * 200_000 + b"]" * 200_000, headers={"Content-Type": "application/json"})
    assert deep.status_code == 400 and deep.json()["error"] == "Malformed JSON body"
    cut = api.post("/backup", data=b"--xyz\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nPK...", headers={"Content-Type": "multipart/form-data; boundary=xyz"})
    assert cut.status_code == 400 and cut.json()["error"] == "The multipart body ends before its closing boundary"
    assert_unchanged(home)


def test_an_upload_above_the_bound_is_a_413_before_its_body_is_read(home):
    server = home["home"].server
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.putrequest("POST", "/api/v1/backup")
    connection.putheader("Authorization", f"Bearer {home['home'].admin.token}")
    connection.putheader("Content-Type", "multipart/form-data; boundary=xyz")
    connection.putheader("Content-Length", str(600 << 20))
    connection.endheaders()
    response = connection.getresponse()
    assert response.status == 413 and "larger than 512 MB" in json.loads(response.read())["error"]
    connection.close()


def test_admin_only(home):
    user, standard = home["home"].new_user("standard")
    for method, path in (("GET", "/backup"), ("POST", "/backup"), ("GET", "/backup/local"), ("POST", "/backup/restore-local")):
        response = standard.request(method, path, json_body={"version": 1, "tables": {}})
        assert (response.status_code, response.json()) == (403, {"error": "Admin access required"}), (method, path)
    assert home["home"].admin.delete(f"/users/{user['id']}").status_code == 204  # the read routes as they were


def test_the_good_archive_itself_restores(home):
    # the cases above differ from it in one thing each
    response = upload(home["home"].admin, zip_of(good_entries(home)))
    assert response.status_code == 200, response.text
    shutil.rmtree(home["home"].server.data_dir / "restore-staged")  # not applied: the next test restarts


def test_nothing_was_staged_after_a_restart(home):
    home["home"].server.restart()
    assert_unchanged(home)
