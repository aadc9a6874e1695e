"""A real mosquitto on a loopback port: the one start-up the tests (tests/broker.py) and the benchmark
(procs.py) share. Standard library only, so both can import it without the other's helpers."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Mosquitto:
    """``mosquitto -c <workdir>/mosquitto.conf``: anonymous unless a ``password_file`` is given."""

    def __init__(self, workdir: Path, password_file: Path | None = None, extra_config: tuple[str, ...] = ()):
        self.workdir = workdir
        self.port = free_port()
        self.password_file = password_file
        self.extra_config = extra_config
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def start(self, timeout: float = 10.0) -> "Mosquitto":
        self.workdir.mkdir(parents=True, exist_ok=True)
        lines = [f"listener {self.port} 127.0.0.1", "persistence false", "log_dest stderr", "log_type error", "log_type warning", *self.extra_config]
        if self.password_file:
            lines += ["allow_anonymous false", f"password_file {self.password_file}"]
        else:
            lines.append("allow_anonymous true")
        config = self.workdir / "mosquitto.conf"
        config.write_text("\n".join(lines) + "\n")
        out = open(self.workdir / "mosquitto.log", "ab")
        self.process = subprocess.Popen([MOSQUITTO, "-c", str(config)], stdout=out, stderr=out, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError(f"mosquitto exited: {(self.workdir / 'mosquitto.log').read_text(errors='replace')[-2000:]}")
                time.sleep(0.05)
        raise RuntimeError("mosquitto did not start")

    def stop(self) -> None:
        """End it abruptly, as a broker lost to a crash or a power cut."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def restart(self) -> "Mosquitto":
        """Killed, then started again on the same port (retained messages lost)."""
        self.stop()
        return self.start()

    def version(self) -> str | None:
        try:
            out = subprocess.run([MOSQUITTO, "-h"], capture_output=True, text=True, timeout=5).stdout
            return out.splitlines()[0].strip() if out else None
        except Exception:  # noqa: BLE001
            return None
