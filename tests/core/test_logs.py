"""core/logs: secret redaction, the ring buffer behind the log API, and the logging setup."""

from __future__ import annotations

import json
import logging
import uuid

import bcrypt
import jwt
import pytest

from hausbox.core import logs
from hausbox.core.clock import now_ms, parse_iso
from hausbox.core.logs import (
    REDACTED,
    RING_CAPACITY,
    Redactor,
    RingBuffer,
    level_name,
    setup_logging,
)

# ---- redaction -----------------------------------------------------------------------------------


@pytest.fixture
def redactor():
    return Redactor()


def test_api_tokens_are_redacted(redactor):
    token = "hbx_" + "0123456789abcdef" * 4
    out = redactor.redact(f"request with {token} failed")
    assert token not in out and "hbx_0123" not in out
    assert out == f"request with {REDACTED} failed"


def test_jwts_are_redacted(redactor):
    token = jwt.encode({"sub": "user-1", "sid": "s", "exp": 2_000_000_000}, "k" * 32, algorithm="HS256")
    out = redactor.redact(f"verifying {token} now")
    assert token not in out
    assert out == f"verifying {REDACTED} now"


def test_bcrypt_hashes_are_redacted(redactor):
    hashed = bcrypt.hashpw(b"correct-horse", bcrypt.gensalt(4)).decode()
    out = redactor.redact(f"row password_hash {hashed} loaded")
    assert hashed not in out and hashed[7:20] not in out
    assert REDACTED in out


@pytest.mark.parametrize(
    "text, leaked, expected",
    [
        ("login with password=hunter2 ok", "hunter2", "login with password=[REDACTED] ok"),
        ('body {"password": "hunter2", "user": "bob"}', "hunter2", 'body {"password": "[REDACTED]", "user": "bob"}'),
        ("{'password': 'hunter2'}", "hunter2", "{'password': '[REDACTED]'}"),
        ("PASSWORD: hunter2", "hunter2", "PASSWORD: [REDACTED]"),
        ('{"refreshToken":"abcdef0123456789"}', "abcdef0123456789", '{"refreshToken":"[REDACTED]"}'),
        ("Authorization: Bearer opaque-credential", "opaque-credential", "Authorization: [REDACTED]"),
        ("api_key=k-999 next", "k-999", "api_key=[REDACTED] next"),
    ],
)
def test_secret_pairs_are_redacted(redactor, text, leaked, expected):
    out = redactor.redact(text)
    assert leaked not in out
    assert out == expected


def test_url_credentials_are_redacted_but_the_user_and_host_are_kept(redactor):
    out = redactor.redact("connecting to mqtt://bob:hunter2@broker.lan:1883 now")
    assert "hunter2" not in out
    assert out == "connecting to mqtt://bob:[REDACTED]@broker.lan:1883 now"
    assert redactor.redact("https://user:p4ss@example.com/x") == "https://user:[REDACTED]@example.com/x"
    # A URL without credentials is left alone.
    assert redactor.redact("mqtt://broker.lan:1883/topic") == "mqtt://broker.lan:1883/topic"


def test_registered_secret_values_are_redacted_wherever_they_appear(redactor):
    redactor.add_secret("tg-channel-XYZ987")
    out = redactor.redact("sending to chat with tg-channel-XYZ987, again tg-channel-XYZ987!")
    assert "tg-channel-XYZ987" not in out
    assert out == f"sending to chat with {REDACTED}, again {REDACTED}!"
    # Too short to be worth replacing (it would eat ordinary words).
    redactor.add_secret("abc")
    redactor.add_secret("")
    assert redactor.redact("abc is fine") == "abc is fine"


def test_ordinary_text_is_untouched(redactor):
    text = "device kitchen-lamp state on (brightness 200), zone 3, user bob logged in"
    assert redactor.redact(text) == text


class Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


@pytest.fixture
def logger():
    """A private logger (not under ``hausbox``) that keeps its records to itself."""
    log = logging.getLogger(f"test-logs-{uuid.uuid4().hex}")
    log.setLevel(logging.DEBUG)
    log.propagate = False
    yield log
    for handler in list(log.handlers):
        log.removeHandler(handler)


def test_the_text_of_a_record_is_redacted_and_the_record_left_alone(redactor, logger):
    sink = Collect()
    logger.addHandler(sink)
    redactor.add_secret("signing-key-000111")

    logger.info("user %s sent password=%s with key %s", "bob", "hunter2", "signing-key-000111")
    try:
        raise ValueError("broker refused mqtt://bob:topsecret@h")
    except ValueError:
        logger.exception("connect failed")

    first, second = sink.records
    assert redactor.text_of(first) == f"user bob sent password={REDACTED} with key {REDACTED}"
    message = redactor.text_of(second)
    assert message.startswith("connect failed\nTraceback")
    assert "ValueError: broker refused mqtt://bob:[REDACTED]@h" in message
    assert "topsecret" not in message
    # Other handlers still get the record as logged: arguments and exception intact.
    assert first.args == ("bob", "hunter2", "signing-key-000111")
    assert second.exc_info is not None and second.getMessage() == "connect failed"


# ---- ring buffer ---------------------------------------------------------------------------------


@pytest.fixture
def ring(logger):
    buffer = RingBuffer(Redactor())
    logger.addHandler(buffer)
    return buffer


def hausbox_logger(module: str) -> logging.Logger:
    log = logging.getLogger("hausbox." + module)
    log.setLevel(logging.DEBUG)
    return log


def test_capacity_is_2000_and_the_newest_entries_are_kept(logger, ring):
    assert RING_CAPACITY == 2000 and ring.capacity == 2000
    for i in range(2050):
        logger.info("message %d", i)
    everything = ring.query(limit=10_000)
    assert len(everything) == 2000
    assert everything[0]["msg"] == "message 50"
    assert everything[-1]["msg"] == "message 2049"


def test_a_smaller_capacity_is_honoured(logger):
    small = RingBuffer(Redactor(), capacity=3)
    logger.addHandler(small)
    for i in range(5):
        logger.warning("w%d", i)
    assert [e["msg"] for e in small.query()] == ["w2", "w3", "w4"]


def test_entries_have_the_spec_shape(ring):
    log = hausbox_logger("unit-shape")
    log.addHandler(ring)
    try:
        log.warning("careful")
    finally:
        log.removeHandler(ring)
    (entry,) = ring.query()
    assert set(entry) == {"level", "module", "msg", "time"}
    assert entry["level"] == "warn" and entry["module"] == "unit-shape" and entry["msg"] == "careful"
    assert entry["time"].endswith("Z") and abs(parse_iso(entry["time"]) - now_ms()) < 5000
    assert ring.modules() == ["unit-shape"]


def test_level_names():
    assert [level_name(n) for n in (10, 20, 30, 40, 50)] == ["debug", "info", "warn", "error", "fatal"]
    assert level_name(5) == "debug" and level_name(25) == "info"
    assert list(logs.LEVELS) == ["debug", "info", "warn", "error", "fatal", "silent"]


def fill_modules(ring):
    for module, level, msg in [
        ("devices", logging.DEBUG, "debug line"),
        ("devices", logging.INFO, "Kitchen Lamp turned ON"),
        ("devices.zigbee", logging.WARNING, "kitchen sensor slow"),
        ("auth", logging.ERROR, "login refused"),
        ("auth", logging.CRITICAL, "database gone"),
    ]:
        log = hausbox_logger(module)
        log.addHandler(ring)
        try:
            log.log(level, msg)
        finally:
            log.removeHandler(ring)


def test_query_level_is_a_minimum(ring):
    fill_modules(ring)
    assert [e["level"] for e in ring.query(level="warn")] == ["warn", "error", "fatal"]
    assert [e["level"] for e in ring.query(level="error")] == ["error", "fatal"]
    assert len(ring.query(level="debug")) == 5
    assert ring.query(level="silent") == []


def test_query_module_is_exact(ring):
    fill_modules(ring)
    assert [e["msg"] for e in ring.query(module="devices")] == ["debug line", "Kitchen Lamp turned ON"]
    assert [e["msg"] for e in ring.query(module="devices.zigbee")] == ["kitchen sensor slow"]
    assert ring.query(module="dev") == []
    assert ring.modules() == ["auth", "devices", "devices.zigbee"]


def test_query_search_is_case_insensitive(ring):
    fill_modules(ring)
    assert [e["msg"] for e in ring.query(search="KITCHEN")] == ["Kitchen Lamp turned ON", "kitchen sensor slow"]
    assert [e["msg"] for e in ring.query(search="lamp turned on")] == ["Kitchen Lamp turned ON"]
    assert ring.query(search="nowhere") == []


def test_query_filters_combine(ring):
    fill_modules(ring)
    assert [e["msg"] for e in ring.query(search="kitchen", level="warn")] == ["kitchen sensor slow"]
    assert [e["msg"] for e in ring.query(module="auth", level="fatal")] == ["database gone"]


def test_query_since_and_limit(logger, ring):
    base = parse_iso("2026-02-20T10:00:00Z")
    for i in range(6):
        record = logger.makeRecord(logger.name, logging.INFO, __file__, 1, "at %d", (i,), None)
        record.created = (base + i * 60_000) / 1000
        ring.handle(record)
    assert [e["msg"] for e in ring.query(since="2026-02-20T10:03:00Z")] == ["at 3", "at 4", "at 5"]
    assert [e["msg"] for e in ring.query(since="2026-02-20T10:02:30.000+00:00")] == ["at 3", "at 4", "at 5"]
    assert len(ring.query(since="2026-02-20T09:00:00Z")) == 6
    assert ring.query(since="2026-02-21T00:00:00Z") == []
    # limit keeps the newest matches, returned oldest first
    assert [e["msg"] for e in ring.query(limit=2)] == ["at 4", "at 5"]
    assert [e["msg"] for e in ring.query(limit=2, since="2026-02-20T10:01:00Z")] == ["at 4", "at 5"]
    assert ring.query(limit=100)[0]["time"] == "2026-02-20T10:00:00.000Z"


def test_runtime_level_filters_what_enters_the_buffer(logger, ring):
    assert ring.runtime_level == "debug"
    logger.debug("d1")
    assert ring.set_runtime_level("error") == "debug"
    assert ring.runtime_level == "error"
    logger.info("i-dropped")
    logger.warning("w-dropped")
    logger.error("e-kept")
    assert ring.set_runtime_level("silent") == "error"
    logger.critical("fatal-dropped-when-silent")
    assert ring.set_runtime_level("info") == "silent"
    logger.debug("d-dropped")
    logger.info("i-kept")
    assert [e["msg"] for e in ring.query()] == ["d1", "e-kept", "i-kept"]


def test_listeners_get_each_entry_and_cannot_break_or_loop_the_buffer(logger, ring):
    streamed = []

    def relogging(entry):
        streamed.append(entry["msg"])
        logger.info("listener saw %s", entry["msg"])  # would recurse without the guard

    ring.add_listener(lambda entry: 1 / 0)
    ring.add_listener(relogging)
    logger.info("one")
    logger.info("two")
    assert streamed == ["one", "two"]
    assert [e["msg"] for e in ring.query()] == ["one", "listener saw one", "two", "listener saw two"]


# ---- setup_logging -------------------------------------------------------------------------------


@pytest.fixture
def restore_hausbox_logger():
    root = logging.getLogger("hausbox")
    saved = (list(root.handlers), root.level, root.propagate)
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    for handler in saved[0]:
        root.addHandler(handler)
    root.setLevel(saved[1])
    root.propagate = saved[2]


def test_setup_logging_ring_takes_debug_file_follows_its_level_and_both_are_redacted(tmp_path, restore_hausbox_logger):
    ring, redactor = setup_logging(tmp_path / "logs", "warn")
    redactor.add_secret("registered-secret-42")
    log = logging.getLogger("hausbox.unit-setup")
    log.debug("a debug line")
    log.info("an info line password=hunter2")
    log.warning("a warn line with registered-secret-42 and password=hunter2")

    assert [e["msg"] for e in ring.query()] == [
        "a debug line",
        "an info line password=[REDACTED]",
        "a warn line with [REDACTED] and password=[REDACTED]",
    ]
    assert ring.modules() == ["unit-setup"]
    text = (tmp_path / "logs" / "hausbox.log").read_text()
    assert "a debug line" not in text and "an info line" not in text
    lines = text.splitlines()
    assert len(lines) == 1
    assert lines[0].endswith("WARN  unit-setup: a warn line with [REDACTED] and password=[REDACTED]")
    assert "hunter2" not in text and "registered-secret-42" not in text


def test_setup_logging_refuses_an_unknown_level(tmp_path, restore_hausbox_logger):
    with pytest.raises(SystemExit, match="LOG_LEVEL"):
        setup_logging(tmp_path, "verbose")


def test_setup_logging_twice_does_not_duplicate_handlers(tmp_path, restore_hausbox_logger):
    setup_logging(tmp_path / "a", "info")
    ring, _ = setup_logging(tmp_path / "b", "info")
    root = logging.getLogger("hausbox")
    assert sum(isinstance(h, RingBuffer) for h in root.handlers) == 1
    logging.getLogger("hausbox.x").info("only once")
    assert [e["msg"] for e in ring.query()] == ["only once"]
    assert (tmp_path / "b" / "hausbox.log").read_text().count("only once") == 1
    assert "only once" not in (tmp_path / "a" / "hausbox.log").read_text()


def test_ring_entries_are_json_serialisable(logger, ring):
    logger.info("unicode é ✓ and \"quotes\"")
    json.dumps(ring.query())
