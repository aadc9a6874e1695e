"""A local release host and registry (a thread serving what the test puts in it) and plugin archives."""

from __future__ import annotations

import hashlib
import io
import json
import stat
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

INTEGRATION_CODE = '''
from hausbox.sdk import DataSpec, DiscoveredDevice, OrderSpec, SettingDef


class Meteo:
    id, name, description, icon, api_version = "meteo", "Meteo", "a weather station", "cloud", 2

    def __init__(self, context):
        self.context = context
        self.running = False

    def settings_schema(self):
        return [SettingDef("station", "Station")]

    def is_configured(self):
        return True

    def start(self):
        station = self.context.settings.get("station", "garden")
        found = DiscoveredDevice(source_device_id=station, name="Station " + station,
                                 data=[DataSpec("temperature", "number", "temperature", "°C")],
                                 orders=[OrderSpec("state", "enum", enum_values=["ON", "OFF"])])
        self.context.devices.upsert_from_discovery("meteo", found)
        self.context.devices.update_status(station, "online")
        self.context.devices.update_data(station, {"temperature": 21.5})
        self.running = True
        self.context.report_status("connected")

    def stop(self):
        self.running = False

    def status(self):
        return "connected" if self.running else "disconnected"

    def execute_order(self, device, order_key, value):
        self.context.devices.update_data(device.source_device_id, {order_key: value})

    def handle_oauth_callback(self, query):
        if query.get("state") != self.context.settings.get("oauth_state"):
            raise ValueError("bad state")
        self.context.settings.set("oauth_code", query.get("code"))


def create(context):
    return Meteo(context)
'''

RECIPE_CODE = '''
from hausbox.sdk import Recipe, Runner, Slot, load_texts


class EchoRunner(Runner):
    def __init__(self, params, ctx):
        self.ctx = ctx
        self.equipment = params["equipment"]
        ctx.state.set("seen", 0)
        ctx.on("equipment.data.changed", self.changed)

    def changed(self, event):
        if event.get("equipmentId") == self.equipment:
            self.ctx.state.set("seen", self.ctx.state.get("seen", 0) + 1)
            self.ctx.log("seen " + str(event.get("value")))

    def stop(self):
        pass


class Echo(Recipe):
    id = "echo-watch"
    name = "Echo watch"
    description = "counts an equipment's changes"
    slots = (Slot("equipment", "equipment", required=True),)
    i18n = load_texts(__name__)

    def validate(self, params, ctx):
        pass

    def create_instance(self, params, ctx):
        return EchoRunner(params, ctx)


def create_recipe():
    return Echo()
'''


def manifest(plugin_id: str = "meteo", repo: str = "hausbox/meteo", version: str = "1.0.0", kind: str = "integration", **extra: Any) -> dict[str, Any]:
    return {"id": plugin_id, "name": plugin_id.title(), "version": version, "description": "test plugin", "icon": "cloud",
            "repo": repo, "type": kind, "apiVersion": 2, **extra}  # fmt: skip


def archive(files: dict[str, bytes | str], links: dict[str, str] | None = None) -> bytes:
    """A zip of ``files`` (path -> content) and symbolic links (path -> target)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for path, content in files.items():
            zf.writestr(path, content)
        for path, target in (links or {}).items():
            info = zipfile.ZipInfo(path)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, target)
    return out.getvalue()


TEXTS = {"name": "Echo watch", "description": "counts an equipment's changes", "slots": {"equipment": {"name": "Equipment", "description": "watched"}}}


def plugin_archive(kind: str = "integration", code: str | None = None, **manifest_fields: Any) -> bytes:
    body = manifest(kind=kind, **manifest_fields)
    files: dict[str, bytes | str] = {"manifest.json": json.dumps(body), "__init__.py": code if code is not None else (RECIPE_CODE if kind == "recipe" else INTEGRATION_CODE)}
    if kind == "recipe":
        files.update({"texts/en.json": json.dumps(TEXTS), "texts/fr.json": json.dumps(TEXTS)})
    return archive(files)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Host:
    """An HTTP server in a thread: ``files[path] = bytes`` is what GET ``path`` answers (else 404)."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.requests: list[str] = []
        host = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                host.requests.append(self.path)
                body = host.files.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def registry(self, *entries: dict[str, Any]) -> None:
        self.files["/registry.json"] = json.dumps(list(entries)).encode()

    def release(self, repo: str, version: str, data: bytes, latest: bool = False) -> None:
        self.files[f"/{repo}/releases/download/v{version}/plugin.zip"] = data
        if latest:
            self.files[f"/{repo}/releases/latest/download/plugin.zip"] = data

    def settings(self) -> dict[str, str]:
        return {"plugins.registryUrl": self.url + "/registry.json", "plugins.releaseBaseUrl": self.url}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def entry(plugin_id: str = "meteo", repo: str = "hausbox/meteo", version: str = "1.0.0", kind: str = "integration", **extra: Any) -> dict[str, Any]:
    return {"id": plugin_id, "type": kind, "name": plugin_id.title(), "description": "d", "icon": "cloud", "author": repo.split("/")[0],
            "repo": repo, "version": version, "tags": [], **extra}  # fmt: skip
