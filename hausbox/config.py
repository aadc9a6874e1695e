"""Process configuration, read once from the environment (see DESIGN.md, Contracts)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping


def _flag(value: str | None, default: bool) -> bool:
    if value is None or value.strip() == "":
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


def _int(env: Mapping[str, str], key: str, default: int) -> int:
    raw = env.get(key, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise SystemExit(f"{key} must be an integer, got {raw!r}")


@dataclass(frozen=True)
class Config:
    data_dir: Path
    port: int = 3000
    bind: str = "0.0.0.0"
    log_level: str = "info"
    mdns: bool = True
    shadow_mode: bool = False
    takeover: bool = False
    # Appliance tuning knobs, not part of the public contract.
    bcrypt_rounds: int = 12
    login_rate_per_minute: int = 10
    ws_backlog_bytes: int = 2 << 20  # unread WebSocket bytes before a client is dropped
    order_confirm_s: float = 30.0  # delivery-confirmation wait (spec: 30 s)
    http_idle_s: float = 30.0  # a connection's wait for its next request (and for any read or write)
    http_header_s: float = 10.0  # from a request line to the end of its headers
    storage_low_bytes: int = 50 << 20  # free space under which the storage alarm is raised
    # Addresses of the box itself (loopback included) the camera proxy may still reach: none unless
    # set, for a camera served from the box itself (tests, development). Comma list in the env.
    camera_local_addresses: tuple[str, ...] = ()
    clock_skew_ms: int = 0  # testing aid: shifts the engine's clock (schedules, timers)
    strict_events: bool = False  # testing aid: every emitted payload is checked against its TypedDict
    # Versions and self-update (hausbox/system/versions.py, update.py; the helper is hausbox/updater).
    release_feed: str = ""  # URL of the release feed (JSON); empty: no polling unless the setting names one
    install_root: Path | None = None  # the appliance's install root (releases/, current); None: self-update off
    restart_command: str = ""  # what the helper runs to restart the service (appliance: systemctl restart hausbox)
    update_launcher: str = "auto"  # how the helper is started: auto, detached, or a command prefix
    update_watchdog_s: float = 900.0  # spec: an update without a result for 15 minutes has failed
    update_health_timeout_s: float = 120.0  # how long the helper waits for the new release to serve
    version_first_poll_s: float = 10.0  # digest: first poll 10 s after start, then hourly

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> "Config":
        return cls(
            data_dir=Path(env.get("HAUSBOX_DATA_DIR") or "./data").resolve(),
            port=_int(env, "PORT", 3000),
            bind=env.get("HAUSBOX_BIND") or "0.0.0.0",
            log_level=(env.get("LOG_LEVEL") or "info").strip().lower(),
            mdns=_flag(env.get("HAUSBOX_MDNS"), True),
            shadow_mode=_flag(env.get("SERVICE_SHADOW_MODE"), False),
            takeover=_flag(env.get("SERVICE_TAKEOVER"), False),
            bcrypt_rounds=_int(env, "HAUSBOX_BCRYPT_ROUNDS", 12),
            login_rate_per_minute=_int(env, "HAUSBOX_LOGIN_RATE", 10),
            ws_backlog_bytes=_int(env, "HAUSBOX_WS_BACKLOG_BYTES", 2 << 20),
            order_confirm_s=float(env.get("HAUSBOX_ORDER_CONFIRM_S") or 30.0),
            http_idle_s=float(env.get("HAUSBOX_HTTP_IDLE_S") or 30.0),
            http_header_s=float(env.get("HAUSBOX_HTTP_HEADER_S") or 10.0),
            storage_low_bytes=_int(env, "HAUSBOX_STORAGE_LOW_BYTES", 50 << 20),
            camera_local_addresses=tuple(a.strip() for a in env.get("HAUSBOX_CAMERA_LOCAL_ADDRESSES", "").split(",") if a.strip()),
            clock_skew_ms=_int(env, "HAUSBOX_CLOCK_SKEW_MS", 0),
            strict_events=_flag(env.get("HAUSBOX_STRICT_EVENTS"), False),
            release_feed=(env.get("HAUSBOX_RELEASE_FEED") or "").strip(),
            install_root=Path(env["HAUSBOX_INSTALL_ROOT"]).absolute() if env.get("HAUSBOX_INSTALL_ROOT", "").strip() else None,
            restart_command=(env.get("HAUSBOX_RESTART_COMMAND") or "").strip(),
            update_launcher=(env.get("HAUSBOX_UPDATE_LAUNCHER") or "auto").strip(),
            update_watchdog_s=float(env.get("HAUSBOX_UPDATE_WATCHDOG_S") or 900.0),
            update_health_timeout_s=float(env.get("HAUSBOX_UPDATE_HEALTH_TIMEOUT_S") or 120.0),
            version_first_poll_s=float(env.get("HAUSBOX_VERSION_FIRST_POLL_S") or 10.0),
        )
