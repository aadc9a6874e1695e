"""The QEMU smoke tests' agent in the guest: one JSON request a line on a virtio-serial port, one JSON
answer a line. A fixed set of questions (no shell): what mDNS shows from inside the LAN, the release
slots and units, the journal, and a clean power-off. Enabled only by ``hausbox.smoke=1`` on the
kernel command line (see hausbox-smoke-agent.service)."""

import glob
import json
import os
import subprocess
import time

PORT = "/dev/virtio-ports/hausbox.smoke"
INSTALL_ROOT = "/opt/hausbox"


def run(*command):
    done = subprocess.run(command, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else f"exit {done.returncode}: {done.stderr.strip()}"


def mdns(seconds=8.0):
    """Every _hausbox._tcp and _http._tcp instance seen on the LAN, and what hausbox.local resolves to."""
    from zeroconf import AddressResolver, ServiceBrowser, Zeroconf

    zc = Zeroconf()
    names = {}

    class Listener:
        def add_service(self, zc, kind, name):
            names[name] = kind

        update_service = add_service

        def remove_service(self, zc, kind, name):
            names.pop(name, None)

    browsers = [ServiceBrowser(zc, kind, Listener()) for kind in ("_hausbox._tcp.local.", "_http._tcp.local.")]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and len(names) < 2:
        time.sleep(0.2)
    services = []
    for name, kind in sorted(names.items()):
        info = zc.get_service_info(kind, name, 3000)
        if info is not None:
            properties = {k.decode(): (v.decode() if v is not None else None) for k, v in info.properties.items()}
            services.append({"type": kind, "name": name, "server": info.server, "port": info.port,
                             "addresses": info.parsed_addresses(), "properties": properties})
    host = AddressResolver("hausbox.local.")
    host_addresses = host.parsed_addresses() if host.request(zc, 3000) else []
    for browser in browsers:
        browser.cancel()
    zc.close()
    return {"services": services, "hausbox.local": host_addresses}


def link(name):
    path = os.path.join(INSTALL_ROOT, name)
    return os.readlink(path) if os.path.islink(path) else None


def status():
    return {
        "current": link("current"),
        "previous": link("previous"),
        "releases": sorted(os.listdir(os.path.join(INSTALL_ROOT, "releases"))),
        "units": {u: run("systemctl", "is-active", u) for u in ("hausbox", "hausbox-recover", "hausbox-grow-data")},
        "failed": run("systemctl", "list-units", "--failed", "--plain", "--no-legend"),
        "machineId": open("/etc/machine-id").read().strip(),
        "rootPassword": run("passwd", "--status", "root"),
        "sshHostKeys": glob.glob("/etc/ssh/ssh_host_*"),
        "serviceSandbox": dict(
            line.split("=", 1) for line in run("systemctl", "show", "-p", "ProtectSystem", "-p", "ReadWritePaths", "hausbox").splitlines()
        ),
        "dataPartition": run("df", "-B1", "--output=size,source", "/var/lib/hausbox"),
        "rootMount": run("findmnt", "-no", "OPTIONS", "/"),
        "bootTime": run("systemd-analyze"),
        "criticalChain": run("systemd-analyze", "critical-chain", "--no-pager", "hausbox.service"),
        "blame": run("systemd-analyze", "blame", "--no-pager").splitlines()[:12],
    }


def update():
    """The update helper's state.json and the end of its log (the data partition's update/ folder)."""
    folder = "/var/lib/hausbox/update"
    try:
        state = json.load(open(os.path.join(folder, "state.json")))
    except (OSError, ValueError):
        state = None
    try:
        log = open(os.path.join(folder, "helper.log"), errors="replace").read()[-3000:]
    except OSError:
        log = ""
    return {"state": state, "helperLog": log}


def journal(lines=200):
    return run("journalctl", "-b", "--no-pager", "-o", "short-monotonic", "-n", str(int(lines)))


def send(port, reply):
    """One JSON line; the port is unbuffered, where a large write may be taken in parts."""
    data = memoryview((json.dumps(reply) + "\n").encode())
    while data:
        data = data[port.write(data) or 0:]


def main():
    while not os.path.exists(PORT):  # udev names the port a moment after boot
        time.sleep(0.5)
    with open(PORT, "r+b", buffering=0) as port:
        buffer = b""
        while True:
            chunk = port.read(4096)
            if not chunk:
                time.sleep(0.2)  # no host connected yet
                continue
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                try:
                    request = json.loads(line)
                    kind = request["cmd"]
                    if kind == "poweroff":
                        send(port, {"id": request.get("id"), "ok": True})
                        subprocess.Popen(["systemctl", "poweroff"])
                        continue
                    answer = {"mdns": mdns, "status": status, "journal": journal, "update": update}[kind](*request.get("args", []))
                    reply = {"id": request.get("id"), "ok": True, "result": answer}
                except Exception as error:  # a wrong question is answered, never fatal
                    reply = {"id": None, "ok": False, "error": f"{error.__class__.__name__}: {error}"}
                send(port, reply)


if __name__ == "__main__":
    main()
