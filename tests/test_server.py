"""The server process (hausbox/server.py): graceful stop on SIGTERM / SIGINT, and JSON answers for
requests no route takes. It lives with the system suites: it is the system seen from outside."""

from __future__ import annotations

import signal
import socket
import threading
import time

import pytest
import requests

from tests.harness import PASSWORD


def port_closed(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) != 0


def test_sigterm_lets_a_request_in_flight_finish_then_exits_0(make_server):
    # bcrypt at cost 14: a login takes about a second, long enough to be caught mid-way.
    server = make_server(env={"HAUSBOX_BCRYPT_ROUNDS": "14"})
    setup = server.api().post("/auth/setup", {"username": "owner", "password": PASSWORD, "displayName": "Owner"})
    assert setup.status_code == 201, setup.text

    result: dict = {}

    def login() -> None:
        started = time.monotonic()
        try:
            result["response"] = server.api().post("/auth/login", {"username": "owner", "password": PASSWORD})
        except Exception as error:  # surfaced by the assertions below
            result["error"] = error
        result["elapsed"] = time.monotonic() - started
        result["answered_at"] = time.monotonic()

    thread = threading.Thread(target=login)
    thread.start()
    time.sleep(0.2)
    assert server.process.poll() is None
    server.process.send_signal(signal.SIGTERM)
    signalled_at = time.monotonic()

    thread.join(15)
    assert not thread.is_alive()
    assert "error" not in result, result.get("error")
    response = result["response"]
    assert response.status_code == 200, response.text
    assert response.json()["accessToken"] and response.json()["user"]["username"] == "owner"
    assert result["answered_at"] > signalled_at  # the request really was in flight at the signal

    assert server.process.wait(timeout=8) == 0
    assert time.monotonic() - signalled_at < 8
    output = server.output()
    assert "server: shutting down" in output and "server: stopped" in output
    assert output.index("server: shutting down") < output.index("server: stopped")
    assert "Traceback" not in output and "still running" not in output
    assert "server: stopped" in (server.data_dir / "logs" / "hausbox.log").read_text()
    assert port_closed(server.port)


def test_sigterm_with_an_idle_websocket_open_still_exits_promptly(make_server):
    server = make_server()
    pair = server.api().post("/auth/setup", {"username": "owner", "password": PASSWORD, "displayName": "Owner"}).json()
    ws = server.ws(pair["accessToken"])
    try:
        started = time.monotonic()
        assert server.stop(timeout=8) == 0
        assert time.monotonic() - started < 5
    finally:
        ws.close()
    assert "server: stopped" in server.output()


def test_an_idle_keep_alive_connection_does_not_hold_the_stop(make_server):
    server = make_server()
    session = requests.Session()  # keeps its connection open after the answer
    assert session.get(server.url + "/api/v1/health", timeout=5).status_code == 200
    try:
        started = time.monotonic()
        assert server.stop(timeout=8) == 0
        assert time.monotonic() - started < 3  # well under the 10 s drain limit
    finally:
        session.close()
    assert "still running" not in server.output()


def test_sigint_stops_cleanly_too(make_server):
    server = make_server()
    server.process.send_signal(signal.SIGINT)
    assert server.process.wait(timeout=8) == 0
    assert "server: stopped" in server.output()


def test_no_new_request_is_served_after_the_stop(make_server):
    server = make_server()
    assert server.stop() == 0
    with pytest.raises(requests.ConnectionError):
        requests.get(server.url + "/api/v1/health", timeout=2)


# ---- requests no route takes ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "method, path, with_token",
    [
        ("GET", "/api/v1/no-such-thing", False),
        ("GET", "/api/v1/no-such-thing", True),
        ("POST", "/api/v1/no-such-thing", True),
        ("GET", "/api/v2/health", False),
        ("GET", "/api/v1/users/some-id/nothing-here", True),
        ("GET", "/assets/x/no-such-file.js", False),  # "/" is the web console's page
        ("GET", "/favicon.ico", False),
    ],
)
def test_unknown_route_is_a_json_404(home, method, path, with_token):
    headers = {"Authorization": f"Bearer {home.admin.token}"} if with_token else {}
    response = requests.request(method, home.server.url + path, headers=headers, json={} if method == "POST" else None, timeout=10)
    assert response.status_code == 404
    assert response.headers["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"} and isinstance(body["error"], str) and body["error"]


@pytest.mark.parametrize(
    "method, path",
    [
        ("DELETE", "/api/v1/health"),
        ("POST", "/api/v1/health"),
        ("POST", "/api/v1/settings"),
        ("PATCH", "/api/v1/logs/level"),
        ("GET", "/api/v1/auth/login"),
    ],
)
def test_wrong_method_is_a_json_405(home, method, path):
    response = requests.request(method, home.server.url + path, headers={"Authorization": f"Bearer {home.admin.token}"}, timeout=10)
    assert response.status_code == 405, response.text
    assert response.headers["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"} and body["error"]
    assert "Allow" in response.headers


def test_keep_alive_responses_are_not_held_back_by_nagle(make_server):
    import time as _time

    import requests

    server = make_server()
    session = requests.Session()
    session.get(server.url + "/api/v1/health")
    durations = []
    for _ in range(10):
        started = _time.perf_counter()
        session.get(server.url + "/api/v1/health")
        durations.append(_time.perf_counter() - started)
    # Nagle against delayed ACK costs ~40 ms per reused connection; a healthy answer takes a few.
    assert sorted(durations)[5] < 0.03, durations


def test_a_connection_with_requests_waiting_takes_turns_with_the_others(make_server):
    """A client that pipelines a thousand requests does not hold the core: a request on another
    connection is answered long before the thousandth answer (gevent serves a connection's next
    request without going back to the loop when its bytes are already there)."""
    server = make_server()
    pipelined = socket.create_connection(("127.0.0.1", server.port))
    other = socket.create_connection(("127.0.0.1", server.port))
    request = b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n"
    count, answers = 1000, []

    def read_all() -> None:
        data = b""
        while data.count(b"HTTP/1.1 200") < count:
            chunk = pipelined.recv(1 << 16)
            if not chunk:
                break
            data += chunk
            answers.append((time.monotonic(), data.count(b"HTTP/1.1 200")))

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    pipelined.sendall(request * count)
    time.sleep(0.02)  # the server is busy with the pipeline
    other.sendall(request)
    reply = other.recv(4096)
    other_answered = time.monotonic()
    reader.join(30)
    assert reply.startswith(b"HTTP/1.1 200"), reply
    assert answers and answers[-1][1] == count, answers[-1:]
    served_before = max((n for at, n in answers if at <= other_answered), default=0)
    assert served_before < count / 2, f"the other connection waited for {served_before} pipelined answers"
    pipelined.close()
    other.close()


def test_connections_beyond_the_bound_wait_in_the_listen_queue(make_server):
    from hausbox.server import MAX_CONNECTIONS

    from hausbox.api.connection import MAX_PER_CLIENT

    server = make_server()
    # from several loopback addresses: one address alone may hold only MAX_PER_CLIENT of them
    sources = [f"127.0.0.{2 + n // MAX_PER_CLIENT}" for n in range(MAX_CONNECTIONS)]
    held = [socket.create_connection(("127.0.0.1", server.port), source_address=(source, 0)) for source in sources]
    try:
        late = socket.create_connection(("127.0.0.1", server.port))  # the kernel queues it
        late.settimeout(0.5)
        late.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
        with pytest.raises(socket.timeout):
            late.recv(4096)  # not served while every slot is taken
        held.pop().close()
        late.settimeout(5)
        assert late.recv(4096).startswith(b"HTTP/1.1 200")
        late.close()
    finally:
        for sock in held:
            sock.close()
