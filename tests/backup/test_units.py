"""The hand-written parts on their own: the multipart reader at every chunk size, and the history
CSV read back exactly."""

from __future__ import annotations

import io
import sqlite3
import zipfile

import pytest

from hausbox.backup import upload
from hausbox.core.errors import BadRequest, PayloadTooLarge
from hausbox.history import csvdump
from hausbox.history.batch import Batch
from hausbox.history.store import HistoryStore

BOUNDARY = b"----hb7MA4YWxkTrZu0gW"
# A file that holds near-delimiters: a CRLF, dashes, the boundary without its CRLF.
CONTENT = b"PK\x03\x04" + b"\r\n--" + b"\r\n-" + b"--" + BOUNDARY + b"x" * 70_000 + b"\r\n--" + BOUNDARY[:-1] + b"end\r"


def body(*parts: tuple[str, bytes]) -> bytes:
    out = b"preamble\r\n"
    for name, data in parts:
        out += b"--" + BOUNDARY + f'\r\nContent-Disposition: form-data; name="{name}"; filename="b.zip"\r\nContent-Type: application/zip\r\n\r\n'.encode() + data + b"\r\n"
    return out + b"--" + BOUNDARY + b"--\r\n"


def reader(data: bytes, size: int):
    stream = io.BytesIO(data)
    return lambda: stream.read(size)


@pytest.mark.parametrize("size", [1, 2, 7, 13, 64, 1000, 65536])
def test_the_file_part_is_read_whole_at_any_chunk_size(size):
    target = io.BytesIO()
    data = body(("other", b"--" + BOUNDARY[:-2] + b"x"), ("file", CONTENT))
    assert upload.save_file_field(reader(data, size), BOUNDARY, target, 1 << 20) == len(CONTENT)
    assert target.getvalue() == CONTENT


def test_no_file_part_a_cut_body_and_the_bound():
    with pytest.raises(BadRequest, match="no file field"):
        upload.save_file_field(reader(body(("other", b"x")), 5), BOUNDARY, io.BytesIO(), 1 << 20)
    with pytest.raises(BadRequest, match="ends before its closing boundary"):
        upload.save_file_field(reader(body(("file", CONTENT))[:-200], 9), BOUNDARY, io.BytesIO(), 1 << 20)
    with pytest.raises(PayloadTooLarge):
        upload.save_file_field(reader(body(("file", CONTENT)), 4096), BOUNDARY, io.BytesIO(), 1000)
    with pytest.raises(BadRequest):
        upload.boundary_of("application/zip")


def test_the_history_csv_reads_back_exactly(tmp_path):
    (tmp_path / "a").mkdir()
    store = HistoryStore(tmp_path / "a" / "history.db")
    values = [1 / 3, 19.25, -0.1, 1e20, 12345678.901, 0.0, 2.5e-7]
    batch = Batch(
        points=[("eq,1", "temp\"x", 1_700_000_000_000 + i, v) for i, v in enumerate(values)],
        texts=[("eq,1", "state", 1_700_000_000_000, "on, \"really\"\nyes")],
        meters={("meter", "energy"): (1234.5, 1_700_000_000_000, "datum-1")},
    )
    batch.add_energy(("meter", "energy"), 1_700_000_000_000, 1_699_999_200_000, 1 / 7, 2.0)
    store.write(batch)
    store.flush()
    store.close()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        rows = csvdump.export(tmp_path / "a" / "history.db", lambda name: out.open(name, "w"))
    assert rows == len(values) + 1 + 2  # points, text, energy hourly and daily
    with zipfile.ZipFile(buffer) as zipped:
        restored = csvdump.import_into(tmp_path / "history.db", lambda name: zipped.open(name) if name in zipped.namelist() else None)
    assert restored == rows

    def content(path):
        db = sqlite3.connect(path)
        query = "SELECT s.equipment_id, s.alias, t.* FROM {t} t JOIN series s ON s.id = t.series ORDER BY 1, 2, 3"
        found = {}
        for table in ("points", "text_points", "energy_hourly", "energy_daily", "meters"):
            series_at = 2 if table == "meters" else 3  # the store's own ids are not kept: left out
            found[table] = [row[:series_at] + row[series_at + 1:] for row in db.execute(query.format(t=table))]
        db.close()
        return found

    assert content(tmp_path / "history.db") == content(tmp_path / "a" / "history.db")
    store = HistoryStore(tmp_path / "history.db")  # the store opens what was rebuilt, and reads the same values
    assert [v for _ts, v in store.raw("eq,1", 'temp"x')] == values
    store.close()


def test_a_history_backup_made_before_meters_kept_their_device_restores_its_baselines(tmp_path):
    files = {"meters.csv": b"equipmentId,alias,reading,ts\nmeter,energy,1234.5,1700000000000\n"}
    csvdump.import_into(tmp_path / "history.db", lambda name: io.BytesIO(files[name]) if name in files else None)
    store = HistoryStore(tmp_path / "history.db")
    assert store.meter_baselines() == {("meter", "energy"): (1234.5, 1_700_000_000_000, None)}  # takes the next reading's device
    store.close()
