"""Real processes the bench starts (mosquitto, the service, its helpers) and what /proc says of them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import requests

from benchlib.mosquitto import Mosquitto, free_port

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ---- /proc -------------------------------------------------------------------------------------
def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (all its threads), in seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime (fields 14 and 15)


def status_kb(pid: int, field: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def rss_mb(pid: int) -> float | None:
    kb = status_kb(pid, "VmRSS")
    return round(kb / 1024, 1) if kb is not None else None


def io_counters(pid: int) -> dict[str, int]:
    try:
        with open(f"/proc/{pid}/io") as f:
            return {k: int(v) for k, v in (line.split(":") for line in f if ":" in line)}
    except OSError:
        return {}


def machine_busy_seconds() -> float | None:
    """CPU time spent by the whole machine (every core, every process), from /proc/stat."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return (user + nice + system + irq + softirq + steal) / CLK_TCK


class CpuMeter:
    """CPU use of named processes between ``start()`` and ``stop()``, in % of one core; plus
    ``other_processes``: what the rest of the machine used meanwhile (noise from elsewhere)."""

    def __init__(self, pids: dict[str, int | None]):
        self.pids = {name: pid for name, pid in pids.items() if pid}
        self._t0 = 0.0
        self._c0: dict[str, float | None] = {}
        self._machine0: float | None = None

    def start(self) -> "CpuMeter":
        self._t0 = time.monotonic()
        self._c0 = {name: cpu_seconds(pid) for name, pid in self.pids.items()}
        self._machine0 = machine_busy_seconds()
        return self

    def stop(self) -> dict[str, float | None]:
        elapsed = max(time.monotonic() - self._t0, 1e-6)
        out: dict[str, float | None] = {}
        for name, pid in self.pids.items():
            now, before = cpu_seconds(pid), self._c0.get(name)
            out[name] = round(100 * (now - before) / elapsed, 1) if now is not None and before is not None else None
        machine = machine_busy_seconds()
        if machine is not None and self._machine0 is not None:
            ours = sum(v for v in out.values() if v is not None)
            out["other_processes"] = round(max(0.0, 100 * (machine - self._machine0) / elapsed - ours), 1)
        return out


def dir_bytes(path: Path) -> dict[str, int]:
    """Sizes of the files under ``path``: ``total``, ``database`` (*.db, -wal, -shm) and ``logs``."""
    sizes = {"total": 0, "database": 0, "logs": 0}
    for file in path.rglob("*"):
        try:
            if not file.is_file():
                continue
            size = file.stat().st_size
        except OSError:
            continue
        sizes["total"] += size
        if file.name.endswith((".db", ".db-wal", ".db-shm", ".sqlite", ".sqlite-wal", ".sqlite-shm")):
            sizes["database"] += size
        elif "logs" in file.relative_to(path).parts:
            sizes["logs"] += size
    return sizes


# ---- mosquitto ---------------------------------------------------------------------------------
class Broker(Mosquitto):
    def __init__(self, workdir: Path):
        super().__init__(workdir, extra_config=("sys_interval 1",))  # $SYS counters (dropped messages) every second


# ---- the service -------------------------------------------------------------------------------
class Service:
    """``python -m hausbox serve`` on a loopback port with its own data directory."""

    def __init__(self, data_dir: Path, log_path: Path, port: int | None = None):
        self.data_dir = data_dir
        self.log_path = log_path
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None
        self.spawned_at = 0.0
        self.exit_rusage: Any = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None and self.process.poll() is None

    def spawn(self) -> "Service":
        env = {
            **os.environ,
            "PORT": str(self.port),
            "HAUSBOX_BIND": "127.0.0.1",
            "HAUSBOX_DATA_DIR": str(self.data_dir),
            "HAUSBOX_MDNS": "0",
            "LOG_LEVEL": "warn",
            "HAUSBOX_BCRYPT_ROUNDS": "4",
            "HAUSBOX_LOGIN_RATE": "1000",
            "TZ": "UTC",
        }
        out = open(self.log_path, "ab")
        self.spawned_at = time.monotonic()
        self.process = subprocess.Popen([sys.executable, "-m", "hausbox", "serve"], cwd=ROOT, env=env, stdout=out, stderr=out, stdin=subprocess.DEVNULL)
        return self

    def wait_healthy(self, timeout: float = 30.0) -> float:
        """Seconds from spawn to the first ``GET /api/v1/health`` answering 200."""
        deadline = time.monotonic() + timeout
        session = requests.Session()
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                raise RuntimeError(f"service exited during start-up:\n{self.output()}")
            try:
                if session.get(self.url + "/api/v1/health", timeout=1).status_code == 200:
                    return time.monotonic() - self.spawned_at
            except requests.RequestException:
                pass
            time.sleep(0.005)
        raise RuntimeError(f"service not healthy within {timeout} s:\n{self.output()}")

    def output(self, tail: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-tail:]
        except OSError:
            return ""

    def stop(self, timeout: float = 20.0) -> dict[str, Any]:
        """SIGTERM and reap with wait4, so the exit's resource usage (bytes written) is known."""
        if self.process is None or self.process.returncode is not None:
            return {}
        t0 = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        killed = False
        while True:
            pid, status, usage = os.wait4(self.process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - t0 > timeout and not killed:
                self.process.kill()
                killed = True
            time.sleep(0.01)
        self.process.returncode = os.waitstatus_to_exitcode(status)
        self.exit_rusage = usage
        return {
            "stop_s": round(time.monotonic() - t0, 3),
            "exit_code": self.process.returncode,
            "killed": killed,
            "write_bytes_total": usage.ru_oublock * 512,  # the kernel's write_bytes, in 512-byte blocks
        }

    def kill(self) -> None:
        if self.process is not None and self.process.returncode is None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class Helper:
    """A bench helper (``python -m benchlib.<module>``) in its own process, spoken to in JSON lines."""

    def __init__(self, module: str, args: list[str], log_path: Path):
        env = {**os.environ, "PYTHONPATH": str(TOOLS) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.module = module
        self.log_file = open(log_path, "ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", f"benchlib.{module}", *args], cwd=ROOT, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log_file,
            start_new_session=True,  # out of the bench's process group: a signal to the group spares it (it quits at the end of its input)
        )  # fmt: skip
        self.log_path = log_path
        self._buffer = b""

    @property
    def pid(self) -> int:
        return self.process.pid

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def receive(self, timeout: float) -> dict[str, Any]:
        """The helper's next JSON line; raises when it does not come in time or the helper died."""
        import selectors

        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    raise TimeoutError(f"no answer from helper {self.module} within {timeout:.0f} s")
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise RuntimeError(f"helper {self.module} exited: {self.log_tail()}")
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def close(self, timeout: float = 10.0) -> None:
        if self.process.poll() is None:
            try:
                assert self.process.stdin is not None
                self.process.stdin.close()
            except OSError:
                pass
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log_file.close()


def db_logical_bytes(path: Path) -> dict[str, int]:
    """Pages in use in every SQLite file under ``path`` (read-only, so safe while the service runs):
    ``allocated`` = page_count x page_size, ``used`` = minus the free pages. Independent of whether
    the write-ahead log was checkpointed yet, unlike the files' sizes."""
    import sqlite3

    out = {"allocated": 0, "used": 0, "files": 0}
    for file in sorted(path.rglob("*.db")):
        try:
            conn = sqlite3.connect(f"file:{file}?mode=ro", uri=True, timeout=5)
            try:
                page_size = conn.execute("PRAGMA page_size").fetchone()[0]
                pages = conn.execute("PRAGMA page_count").fetchone()[0]
                free = conn.execute("PRAGMA freelist_count").fetchone()[0]
            finally:
                conn.close()
        except sqlite3.Error:
            continue
        out["allocated"] += pages * page_size
        out["used"] += (pages - free) * page_size
        out["files"] += 1
    return out
