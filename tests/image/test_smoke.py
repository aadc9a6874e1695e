"""The first boot of the appliance image: healthy in time, set up and used through the API and the
WebSocket, found by mDNS from inside its LAN, no identity baked in, a clean power-off."""

from __future__ import annotations

import os
import re

import websocket

from tests.harness import PASSWORD, wait_for
from tests.image.conftest import BOOT_TIMEOUT_S, BOOT_TO_HEALTHY_S, FIGURES, IDENTITIES
from tests.wsclient import Collector, expect_welcome, subscribe

SIM = "integration.simulator."


def _mib(size: int) -> str:
    return f"{size / 2**20:.0f} MiB"


def _advertised(box, setup_required: str) -> dict:
    """mDNS as a client in the box's LAN sees it, once the TXT records say ``setupRequired``."""
    def look():
        seen = box.ask("mdns", timeout=60)
        ours = [s for s in seen["services"] if s["port"] == 3000 and s["properties"].get("setupRequired") == setup_required]
        return seen if len({s["type"] for s in ours}) == 2 else None

    return wait_for(look, timeout=120, interval=1)


def test_first_boot_setup_use_mdns_and_poweroff(box, build_info):
    FIGURES["image"] = f"{build_info['image']}: {_mib(build_info['imageBytes'])} ({_mib(build_info['allocatedBytes'])} allocated)"
    FIGURES["compressed (.img.zst)"] = _mib(build_info["compressedBytes"])
    FIGURES["build time"] = f"{build_info['buildSeconds']} s"
    assert build_info["compressedBytes"] <= 200 * 2**20, "the compressed image is over 200 MB"

    box.start()
    healthy_s = box.wait_healthy(BOOT_TIMEOUT_S)
    # The 40 s bar is a figure, not an assertion: under TCG it moves with the host's load
    # (43.6 s at load 1.7, 58.4 s at 3.5), and a timed test would make CI's colour the load's.
    verdict = "within" if healthy_s <= BOOT_TO_HEALTHY_S else "OVER"
    FIGURES["boot to healthy (first boot)"] = f"{healthy_s:.1f} s, {verdict} the {BOOT_TO_HEALTHY_S:.0f} s bar ({_load()})"
    anonymous = box.api()
    assert anonymous.get("/auth/status").json() == {"setupRequired": True}

    # mDNS before setup: both services, our TXT records, the box as hausbox.local.
    seen = _advertised(box, "true")
    service = next(s for s in seen["services"] if s["type"] == "_hausbox._tcp.local.")
    assert service["properties"]["version"] == build_info["version"]
    assert service["properties"]["api"] == "/api/v1"
    assert service["server"] == "hausbox.local."
    assert seen["hausbox.local"] and set(seen["hausbox.local"]) <= set(service["addresses"])

    # Setup, login, a zone and a simulated light as an equipment, an order seen on the WebSocket.
    pair = anonymous.post("/auth/setup", {"username": "owner", "password": PASSWORD, "displayName": "Owner"}).json()
    assert pair["accessToken"]
    login = anonymous.post("/auth/login", {"username": "owner", "password": PASSWORD})
    assert login.status_code == 200, login.text
    admin = box.api(login.json()["accessToken"])
    settings = {SIM + "enabled": True, SIM + "rooms": 2, SIM + "seed": 5, SIM + "message_rate": 0}
    assert admin.put("/settings", settings).status_code == 200
    wait_for(lambda: next(i for i in admin.get("/integrations").json() if i["id"] == "simulator")["status"] == "connected", timeout=60, interval=0.5)
    devices = {d["sourceDeviceId"]: d["id"] for d in admin.get("/devices").json() if d["integrationId"] == "simulator"}
    zone = admin.post("/zones", {"name": "Kitchen"})
    assert zone.status_code == 201, zone.text
    light = admin.post("/equipments", {"name": "Kitchen light", "type": "light_dimmable", "zoneId": zone.json()["id"], "deviceIds": [devices["sim-cuisine-light-1"]]})
    assert light.status_code == 201, light.text
    ws = websocket.create_connection(f"ws://127.0.0.1:{box.port}/ws?token={login.json()['accessToken']}", timeout=30)
    expect_welcome(ws)
    subscribe(ws, "equipments")
    collector = Collector(ws)
    try:
        order = admin.post(f"/equipments/{light.json()['id']}/orders/state", {"value": "ON"})
        assert order.status_code == 200, order.text
        executed = collector.wait_for(lambda c: c.events("equipment.order.executed"), timeout=30)
        assert executed[0]["equipmentId"] == light.json()["id"] and executed[0]["value"] == "ON", executed
    finally:
        collector.close()

    # The TXT records follow: setup is done; the instance id is the one the API reports.
    seen = _advertised(box, "false")
    service = next(s for s in seen["services"] if s["type"] == "_hausbox._tcp.local.")
    mode = admin.get("/system/mode")
    assert mode.status_code == 200, mode.text
    assert service["properties"]["instanceId"] == mode.json()["instanceId"]

    # No identity came with the image: a machine id made at this boot, root locked, no ssh keys;
    # the data partition grew to fill the disk; the service runs read-only outside the data dir.
    status = box.ask("status")
    FIGURES["guest boot (systemd-analyze)"] = status["bootTime"].splitlines()[0]
    FIGURES["guest critical chain"] = "\n" + status["criticalChain"]
    assert re.fullmatch(r"[0-9a-f]{32}", status["machineId"]), status
    assert status["rootPassword"].split()[1] in ("L", "LK"), status["rootPassword"]
    assert status["sshHostKeys"] == [], status
    assert int(status["dataPartition"].split()[-2]) > 1.5 * 2**30, status["dataPartition"]  # 256 MiB in the image
    assert status["serviceSandbox"] == {"ProtectSystem": "strict", "ReadWritePaths": "/var/lib/hausbox"}, status
    assert status["current"] == f"releases/{build_info['version']}" and status["units"]["hausbox"] == "active", status
    assert not status["failed"], status["failed"]
    assert all(status["machineId"] != m and service["properties"]["instanceId"] != i for m, i in IDENTITIES), IDENTITIES
    IDENTITIES.append((status["machineId"], service["properties"]["instanceId"]))

    FIGURES["clean power-off"] = f"{box.poweroff():.1f} s"


def test_the_image_boots_through_its_own_uefi_loader(box):
    # As a mini PC boots it: UEFI firmware (OVMF), systemd-boot from the boot partition, the kernel,
    # initrd and command line of its one entry (the other scenarios hand QEMU the kernel directly).
    box.start(uefi=True)
    healthy_s = box.wait_healthy(BOOT_TIMEOUT_S)
    FIGURES["boot to healthy through UEFI (OVMF, systemd-boot)"] = f"{healthy_s:.1f} s ({_load()})"
    assert box.api().get("/auth/status").json() == {"setupRequired": True}


def _load() -> str:
    return "host load average {:.1f} {:.1f} {:.1f} on {} cores".format(*os.getloadavg(), os.cpu_count())
