"""Notification publishers on the real server (a monkey-patched process): a hanging channel holds
no other, and channel secrets reach neither a standard user, nor the WebSocket, nor the log files."""

from __future__ import annotations

import json
import threading
import time

from tests import wsclient
from tests.harness import Home
from tests.notifications.fakes import FakeHttp

TOKEN = "777000:AAF-real-server-token_abc"
HOOK_SECRET = "whsec-real-server-1234"


def test_a_hanging_channel_holds_no_other_and_secrets_stay_admin_only(make_server):
    server = make_server()
    home = Home(server)
    hanging, hook = FakeHttp(hang_s=3.0), FakeHttp()
    hanging.answers = ["hang"]
    try:
        ws = wsclient.connect(server.ws_url, home.admin.token)
        wsclient.expect_welcome(ws)
        collector = wsclient.Collector(ws)
        slow = home.admin.post("/notification-publishers", {"name": "slow", "channelType": "telegram", "channelConfig": {"botToken": TOKEN, "chatId": 1, "apiUrl": hanging.url}}).json()
        fast = home.admin.post("/notification-publishers", {"name": "fast", "channelType": "webhook", "channelConfig": {"url": hook.url, "secret": HOOK_SECRET}}).json()
        answers: dict[str, object] = {}
        thread = threading.Thread(target=lambda: answers.update(slow=home.admin.post(f"/notification-publishers/{slow['id']}/test-channel")))
        thread.start()
        time.sleep(0.3)  # the slow one is waiting on its channel
        start = time.monotonic()
        response = home.admin.post(f"/notification-publishers/{fast['id']}/test-channel")
        assert response.json() == {"success": True, "sent": 1} and time.monotonic() - start < 1.5
        assert len(hook.received) == 1 and "slow" not in answers
        thread.join(10)
        assert answers["slow"].json() == {"success": True, "sent": 1}

        _, standard = home.new_user("standard")
        assert standard.get("/notification-publishers").status_code == 403
        assert standard.get(f"/notification-publishers/{slow['id']}").status_code == 403
        assert home.admin.get(f"/notification-publishers/{slow['id']}").json()["channelConfig"]["botToken"] == TOKEN

        home.admin.put(f"/notification-publishers/{slow['id']}", {"channelConfig": {"botToken": TOKEN, "chatId": 1, "apiUrl": "http://127.0.0.1:9"}})
        failed = home.admin.post(f"/notification-publishers/{slow['id']}/test-channel")
        assert failed.status_code == 400 and TOKEN not in failed.text
        collector.wait_for(lambda c: c.events("notification-publisher.updated"))
        seen = json.dumps(collector.messages())
        assert "notification-publisher.created" in seen and TOKEN not in seen and HOOK_SECRET not in seen
        collector.close()
        ws.close()
        server.stop()
        logs = "".join(path.read_text(errors="replace") for path in (server.data_dir / "logs").glob("*"))
        assert "notification publisher slow" in logs
        for text in (logs, server.output()):
            assert TOKEN not in text and HOOK_SECRET not in text
    finally:
        hanging.close()
        hook.close()
