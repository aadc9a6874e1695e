"""The appliance image booted in QEMU (TCG: KVM does not work on our build machines).

Each ``Box`` is one disk: a qcow2 overlay whose backing file is the built image, so the image stays
pristine and a box keeps its data across reboots and power cuts. The kernel, initrd and command line
are read out of the image's boot partition (the ones systemd-boot would start), plus
``hausbox.smoke=1``, which enables the smoke agent: a fixed set of questions answered over a
virtio-serial port (see buildroot-overlay/usr/lib/hausbox/smoke_agent.py).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import requests

from tests.harness import Api
from tools.benchlib.mosquitto import free_port

# The x86-64 baseline Debian is built for. With "max", TCG also emulates AVX2, which glibc's string
# and memory routines then use, slowly under emulation: the first boot took 28.4 s instead of 24.0.
CPU = os.environ.get("HAUSBOX_QEMU_CPU", "qemu64")
OVMF = Path("/usr/share/ovmf/OVMF.fd")  # Debian's ovmf: UEFI firmware for QEMU
DISK_SIZE = "3G"  # larger than the image: the first boot grows the data partition into the rest


def boot_files(image: Path, folder: Path) -> dict[str, Path | str]:
    """vmlinuz, initrd.img and cmdline.txt from the vfat partition (1 MiB in), without mounting it."""
    folder.mkdir(parents=True, exist_ok=True)
    names = ("vmlinuz", "initrd.img", "cmdline.txt")
    subprocess.run(["mcopy", "-o", "-i", f"{image}@@1M", *(f"::{n}" for n in names), str(folder)], check=True, capture_output=True)
    return {"kernel": folder / "vmlinuz", "initrd": folder / "initrd.img", "cmdline": (folder / "cmdline.txt").read_text().strip()}


class Box:
    def __init__(self, image: Path, folder: Path):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.boot = boot_files(image, folder / "boot")
        self.disk = folder / "disk.qcow2"
        subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b", str(image.resolve()), str(self.disk), DISK_SIZE], check=True)
        self.process: subprocess.Popen | None = None
        self.boots = 0
        self.port = 0
        self._agent: socket.socket | None = None
        self._buffer = b""
        self._asked = 0

    # ---- power ---------------------------------------------------------------------------------
    def start(self, uefi: bool = False) -> None:
        """Boot with the kernel, initrd and command line of the boot partition plus ``hausbox.smoke=1``
        (the agent answers), or with ``uefi`` as a mini PC does: UEFI firmware, the image's own
        systemd-boot and its entry's command line (no agent: only the API answers)."""
        assert self.process is None or self.process.poll() is not None, "already running"
        self.boots += 1
        self.port = self.port or free_port()  # one port for the box's life: clients keep their base URL
        self.serial_log = self.folder / f"serial-{self.boots}.log"
        self.agent_socket = self.folder / f"agent-{self.boots}.sock"
        command = [
            "qemu-system-x86_64", "-M", "q35", "-accel", "tcg", "-cpu", CPU, "-m", "1024", "-smp", "2",
            "-display", "none", "-no-reboot", "-serial", f"file:{self.serial_log}", "-monitor", "none",
            *(["-bios", str(OVMF)] if uefi else [
                "-kernel", str(self.boot["kernel"]), "-initrd", str(self.boot["initrd"]), "-append", f"{self.boot['cmdline']} hausbox.smoke=1",
            ]),
            "-drive", f"file={self.disk},format=qcow2,if=virtio",
            "-netdev", f"user,id=n0,hostfwd=tcp:127.0.0.1:{self.port}-:3000", "-device", "virtio-net-pci,netdev=n0",
            # Real boards have a hardware RNG; without one the guest's first getrandom() calls stall.
            "-device", "virtio-rng-pci",
            "-device", "virtio-serial-pci",
            "-chardev", f"socket,id=agent,path={self.agent_socket},server=on,wait=off",
            "-device", "virtserialport,chardev=agent,name=hausbox.smoke",
        ]  # fmt: skip
        self.started_at = time.monotonic()
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(self.folder / f"qemu-{self.boots}.log", "wb"))
        self._agent = None

    def power_cut(self) -> None:
        """Pull the plug: QEMU killed, whatever the guest had not written is lost."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._close_agent()

    def poweroff(self, timeout: float = 120.0) -> float:
        """A clean shutdown (systemctl poweroff in the guest); the seconds it took QEMU to exit."""
        started = time.monotonic()
        self.ask("poweroff")
        code = self.process.wait(timeout)
        self._close_agent()
        assert code == 0, f"QEMU exited with {code}"
        return time.monotonic() - started

    def close(self) -> None:
        self.power_cut()

    # ---- the API through the forwarded port ---------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def api(self, token: str | None = None) -> Api:
        return Api(self.url, token)

    def wait_healthy(self, timeout: float) -> float:
        """Seconds from QEMU's start to the first 200 from /api/v1/health."""
        deadline = self.started_at + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"QEMU exited ({self.process.returncode}): see {self.serial_log}"
            try:
                if requests.get(self.url + "/api/v1/health", timeout=2).status_code == 200:
                    return time.monotonic() - self.started_at
            except requests.RequestException:
                pass
            time.sleep(0.5)
        raise AssertionError(f"no healthy API {timeout:.0f} s after QEMU started; journal:\n{self.journal_tail()}")

    # ---- the smoke agent ----------------------------------------------------------------------
    def ask(self, command: str, *args: Any, timeout: float = 60.0) -> Any:
        if self._agent is None:
            self._agent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._agent.connect(str(self.agent_socket))
        self._asked += 1
        self._agent.sendall((json.dumps({"id": self._asked, "cmd": command, "args": list(args)}) + "\n").encode())
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                reply = json.loads(line)
                if reply.get("id") == self._asked:
                    assert reply["ok"], reply
                    return reply.get("result")
                assert reply.get("ok", True), reply  # an unparsed request: never a stale answer
            self._agent.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                chunk = self._agent.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                raise AssertionError("the smoke agent's port closed")
            self._buffer += chunk
        raise AssertionError(f"no answer to {command!r} from the smoke agent in {timeout:.0f} s")

    def journal_tail(self) -> str:
        try:
            return self.ask("journal", 150, timeout=30)
        except Exception as error:  # the guest may be the problem: the serial log then
            tail = self.serial_log.read_text(errors="replace")[-4000:] if self.serial_log.exists() else ""
            return f"(no journal: {error})\n{tail}"

    def _close_agent(self) -> None:
        if self._agent is not None:
            self._agent.close()
            self._agent = None
            self._buffer = b""
