"""The console's files served by the engine under / (over real HTTP): the index for pages, assets
with long caching under a content tag, the strict CSP on both, and /api and /ws never shadowed."""

from __future__ import annotations

import re

import requests

from hausbox.console.serve import Console, STATIC

STRICT = ["default-src 'self'", "script-src 'self'", "style-src 'self'", "object-src 'none'", "frame-ancestors 'none'"]


def assets(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="(/assets/[^"]+)"', html)


def test_pages_get_the_index_uncached_and_under_the_strict_policy(module_server):
    for path in ("/", "/energy", "/admin/users", "/setup"):
        response = requests.get(module_server.url + path, timeout=5)
        assert response.status_code == 200, path
        assert response.headers["Content-Type"].startswith("text/html")
        assert response.headers["Cache-Control"] == "no-cache"
        csp = response.headers["Content-Security-Policy"]
        assert all(rule in csp for rule in STRICT), csp
        assert "unsafe-inline" not in csp and "http:" not in csp and "https:" not in csp
        # No inline script or style in the page itself: the policy would block it anyway.
        assert "<style" not in response.text and " style=" not in response.text
        assert all(' src="' in tag for tag in re.findall(r"<script[^>]*>", response.text))
    assert set(assets(response.text)) >= {f"/assets/{Console().tag}/js/main.js", f"/assets/{Console().tag}/css/app.css"}


def test_assets_are_cached_long_under_their_tag_with_their_type(module_server):
    html = requests.get(module_server.url + "/", timeout=5).text
    for path in assets(html):
        response = requests.get(module_server.url + path, timeout=5)
        assert response.status_code == 200, path
        assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        expected = {"js": "text/javascript", "css": "text/css", "svg": "image/svg+xml"}[path.rsplit(".", 1)[1]]
        assert response.headers["Content-Type"].startswith(expected)
        assert response.content == (STATIC / path.split("/", 3)[3]).read_bytes()
    # A page still open from before an update asks with the old tag: it gets the file, not kept long.
    stale = requests.get(module_server.url + "/assets/0123456789ab/js/main.js", timeout=5)
    assert stale.status_code == 200 and stale.headers["Cache-Control"] == "no-cache"


def test_missing_files_and_traversal_are_404_not_the_index(module_server):
    for path in ("/assets/x/js/nope.js", "/favicon.ico", "/assets/x/../serve.py", "/assets/x/%2e%2e/serve.py", "/assets/x/"):
        response = requests.get(module_server.url + path, timeout=5)
        assert response.status_code == 404, path
        assert response.json() == {"error": "Not found"}


def test_api_and_websocket_are_never_shadowed(module_server):
    unknown = requests.get(module_server.url + "/api/v1/no-such-route", timeout=5)
    assert (unknown.status_code, unknown.json()) == (404, {"error": "Not found"})
    assert requests.get(module_server.url + "/api", timeout=5).json() == {"error": "Not found"}
    assert requests.get(module_server.url + "/api/v1/auth/status", timeout=5).json() == {"setupRequired": True}
    # /ws without an upgrade is the hub's answer (not the index page).
    ws = requests.get(module_server.url + "/ws", timeout=5)
    assert "text/html" not in ws.headers.get("Content-Type", "")


def test_writes_to_a_page_path_are_refused(module_server):
    response = requests.post(module_server.url + "/energy", data=b"x", timeout=5)
    assert response.status_code == 405 and response.json() == {"error": "Method not allowed"}

