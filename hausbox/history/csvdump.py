"""The history store as CSV files (the backup's time-series part) and back.

One file per tier, each with a header row, series named by equipment id and alias (the store's
series ids are its own and not kept), times in epoch ms, numbers as Python writes floats (``repr``:
read back exactly):

    raw.csv            ts,equipmentId,alias,value           (numbers; booleans as 1/0)
    raw-text.csv       ts,equipmentId,alias,value           (text and enum values)
    hourly.csv         ts,equipmentId,alias,min,max,mean,sum,count
    daily.csv          (as hourly)
    energy-hourly.csv  ts,equipmentId,alias,hp,hc           (Wh, peak / off-peak)
    energy-daily.csv   (as energy-hourly)
    meters.csv         equipmentId,alias,reading,ts,source  (the meters' baselines, source: the device
                       datum id; backups made before it was kept have no source column)
    jobs.csv           name,doneUntil,lastRun,lastStatus,lastError  (downsampling and retention watermarks)

``export`` reads a closed copy of ``history.db`` (never the live file: the backup copies it first);
``import_into`` builds a fresh store (the store's own schema) from such files, checking every value,
and raises ``CsvError`` naming the file, the line and the column of the first bad one.
"""

from __future__ import annotations

import csv
import io
import math
import sqlite3
from pathlib import Path
from typing import IO, Callable, Iterable, Iterator

from hausbox.history.store import JOURNAL_JOB, JOURNAL_NAME, VALUE, HistoryStore, encoded

_SERIES = "JOIN series ON series.id = {t}.series"
# file -> (header, SELECT of the export, INSERT of the import, the column kinds after the key columns)
FILES: dict[str, tuple[tuple[str, ...], str, str, tuple[str, ...]]] = {
    "raw.csv": (
        ("ts", "equipmentId", "alias", "value"),
        f"SELECT ts, equipment_id, alias, {VALUE} FROM points " + _SERIES.format(t="points") + " ORDER BY ts, series",
        "INSERT INTO points (ts, series, centi, value) VALUES (?, ?, ?, ?)",
        ("number",),
    ),
    "raw-text.csv": (
        ("ts", "equipmentId", "alias", "value"),
        "SELECT ts, equipment_id, alias, value FROM text_points " + _SERIES.format(t="text_points") + " ORDER BY ts, series",
        "INSERT INTO text_points (ts, series, value) VALUES (?, ?, ?)",
        ("text",),
    ),
}
for _tier in ("hourly", "daily"):
    FILES[f"{_tier}.csv"] = (
        ("ts", "equipmentId", "alias", "min", "max", "mean", "sum", "count"),
        f"SELECT ts, equipment_id, alias, min, max, mean, sum, count FROM {_tier} " + _SERIES.format(t=_tier) + " ORDER BY ts, series",
        f"INSERT INTO {_tier} (ts, series, min, max, mean, sum, count) VALUES (?, ?, ?, ?, ?, ?, ?)",
        ("number", "number", "number", "number", "integer"),
    )
for _tier in ("energy_hourly", "energy_daily"):
    FILES[f"{_tier.replace('_', '-')}.csv"] = (
        ("ts", "equipmentId", "alias", "hp", "hc"),
        f"SELECT ts, equipment_id, alias, hp, hc FROM {_tier} " + _SERIES.format(t=_tier) + " ORDER BY ts, series",
        f"INSERT INTO {_tier} (ts, series, hp, hc) VALUES (?, ?, ?, ?)",
        ("number", "number"),
    )
# Not tiers: no time key first. Points are what the tiers hold; these two are the store's state.
META = {
    "meters.csv": (("equipmentId", "alias", "reading", "ts", "source"), "SELECT equipment_id, alias, reading, ts, source FROM meters " + _SERIES.format(t="meters")),
    "jobs.csv": (("name", "doneUntil", "lastRun", "lastStatus", "lastError"), f"SELECT name, done_until, last_run, last_status, last_error FROM jobs WHERE name <> '{JOURNAL_JOB}'"),
}
NAMES = tuple(FILES) + tuple(META)


class CsvError(ValueError):
    """A history file that cannot be restored; the message names the file, line and column."""


def export(history_db: Path, open_entry: Callable[[str], IO[bytes]]) -> int:
    """Write every file of ``NAMES`` through ``open_entry(name)`` (a binary file, closed here);
    returns the number of tier rows written."""
    rows = 0
    db = sqlite3.connect(f"file:{history_db}?mode=ro", uri=True)
    try:
        db.execute("BEGIN")  # one read transaction: the files agree with each other
        for name, (header, query, _insert, _kinds) in FILES.items():
            rows += _write(open_entry(name), header, db.execute(query))
        for name, (header, query) in META.items():
            _write(open_entry(name), header, db.execute(query))
        db.execute("COMMIT")
    finally:
        db.close()
    return rows


def _write(binary: IO[bytes], header: tuple[str, ...], rows: Iterable[tuple]) -> int:
    count = 0
    with io.TextIOWrapper(binary, encoding="utf-8", newline="") as text:
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            writer.writerow(["" if v is None else v for v in row])
            count += 1
    return count


def is_empty(history_db: Path) -> bool:
    """Whether a copy of the store holds no time-series row in any tier (meters alone do not count)."""
    db = sqlite3.connect(f"file:{history_db}?mode=ro", uri=True)
    try:
        tables = ("points", "text_points", "hourly", "daily", "energy_hourly", "energy_daily")
        return all(db.execute(f"SELECT 1 FROM {t} LIMIT 1").fetchone() is None for t in tables)
    finally:
        db.close()


def import_into(history_db: Path, open_entry: Callable[[str], IO[bytes] | None]) -> int:
    """Build a fresh store at ``history_db`` from the files ``open_entry(name)`` gives (None: absent,
    an empty tier). One transaction; returns the tier rows restored. Raises ``CsvError``."""
    HistoryStore(history_db).close()  # the store's own schema, on a new file
    history_db.with_name(JOURNAL_NAME).unlink(missing_ok=True)  # a new store's empty journal
    db = sqlite3.connect(str(history_db), isolation_level=None)
    series: dict[tuple[str, str], int] = {}

    def series_id(equipment_id: str, alias: str) -> int:
        key = (equipment_id, alias)
        if key not in series:
            series[key] = db.execute("INSERT INTO series (equipment_id, alias) VALUES (?, ?)", key).lastrowid
        return series[key]

    rows = 0
    try:
        db.execute("BEGIN")
        for name, (header, _query, insert, kinds) in FILES.items():
            for line, values in _read(open_entry(name), name, header):
                ts = _integer(values[0], name, line, "ts")
                key = (_text(values[1], name, line, "equipmentId"), _text(values[2], name, line, "alias"))
                rest = [_value(kind, v, name, line, header[3 + i]) for i, (kind, v) in enumerate(zip(kinds, values[3:]))]
                if name == "raw.csv":
                    rest = list(encoded(rest[0]))
                _insert(db, insert, (ts, series_id(*key), *rest), name, line)
                rows += 1
        header = META["meters.csv"][0]
        for line, values in _read(open_entry("meters.csv"), "meters.csv", header, older=header[:-1]):
            key = (_text(values[0], "meters.csv", line, "equipmentId"), _text(values[1], "meters.csv", line, "alias"))
            reading = _value("number", values[2], "meters.csv", line, "reading")
            source = values[4] if len(values) > 4 and values[4] else None
            baseline = (series_id(*key), reading, _integer(values[3], "meters.csv", line, "ts"), source)
            _insert(db, "INSERT INTO meters (series, reading, ts, source) VALUES (?, ?, ?, ?)", baseline, "meters.csv", line)
        for line, values in _read(open_entry("jobs.csv"), "jobs.csv", META["jobs.csv"][0]):
            job = (
                _text(values[0], "jobs.csv", line, "name"), _integer(values[1], "jobs.csv", line, "doneUntil"),
                None if values[2] == "" else _integer(values[2], "jobs.csv", line, "lastRun"), values[3] or None, values[4] or None,
            )  # fmt: skip
            _insert(db, "INSERT INTO jobs (name, done_until, last_run, last_status, last_error) VALUES (?, ?, ?, ?, ?)", job, "jobs.csv", line)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    finally:
        db.close()
    return rows


def _read(binary: IO[bytes] | None, name: str, header: tuple[str, ...], older: tuple[str, ...] | None = None) -> Iterator[tuple[int, list[str]]]:
    """``(line number, values)`` of each data row, after checking the header (``header``, or the
    ``older`` one of earlier backups) and each row's width."""
    if binary is None:
        return
    with io.TextIOWrapper(binary, encoding="utf-8", newline="") as text:
        reader = csv.reader(text)
        try:
            first = next(reader, None)
            if first is None or tuple(first) not in (header, older):
                raise CsvError(f"history/{name}: the header must be {','.join(header)}")
            for values in reader:
                if len(values) != len(first):
                    raise CsvError(f"history/{name}, line {reader.line_num}: {len(values)} columns, expected {len(first)}")
                yield reader.line_num, values
        except (UnicodeDecodeError, csv.Error) as error:
            raise CsvError(f"history/{name}: unreadable ({error})") from None


def _insert(db: sqlite3.Connection, sql: str, params: tuple, name: str, line: int) -> None:
    try:
        db.execute(sql, params)
    except sqlite3.IntegrityError as error:
        raise CsvError(f"history/{name}, line {line}: {error}") from None


def _integer(raw: str, name: str, line: int, column: str) -> int:
    try:
        return int(raw)
    except ValueError:
        raise CsvError(f"history/{name}, line {line}, column {column}: not an integer: {raw[:40]!r}") from None


def _text(raw: str, name: str, line: int, column: str) -> str:
    if not raw:
        raise CsvError(f"history/{name}, line {line}, column {column}: empty")
    return raw


def _value(kind: str, raw: str, name: str, line: int, column: str) -> float | int | str:
    if kind == "text":
        return raw
    if kind == "integer":
        return _integer(raw, name, line, column)
    try:
        number = float(raw)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise CsvError(f"history/{name}, line {line}, column {column}: not a number: {raw[:40]!r}")
    return number
