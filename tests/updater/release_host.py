"""A release host for tests: the plugin tests' loopback HTTP server, serving a feed and artifacts."""

from __future__ import annotations

import hashlib
import json

from tests.plugins.helpers import Host


class ReleaseHost(Host):
    """``/feed.json`` is the feed (404 until ``publish``); ``/files/<name>`` the artifacts."""

    @property
    def feed_url(self) -> str:
        return self.url + "/feed.json"

    def feed_requests(self) -> int:
        return self.requests.count("/feed.json")

    def fail_feed(self) -> None:
        self.files.pop("/feed.json", None)

    def publish(self, version: str, archive: bytes | None = None, sha256: str | None = None) -> None:
        """Announce ``version``; with ``archive``, served as its artifact (``sha256`` overrides its hash)."""
        feed = {"version": f"v{version}", "releaseUrl": f"{self.url}/releases/v{version}", "notes": f"hausbox {version}", "artifact": None}
        if archive is not None:
            name = f"hausbox-{version}-wheelhouse.zip"
            self.files[f"/files/{name}"] = archive
            feed["artifact"] = {"url": f"files/{name}", "sha256": sha256 or hashlib.sha256(archive).hexdigest(), "size": len(archive)}
        self.files["/feed.json"] = json.dumps(feed).encode()
