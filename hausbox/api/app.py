"""The WSGI application: the bottle app built from the route table, behind the HTTP middleware."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import bottle
from pony.orm.core import TransactionIntegrityError
from pony.orm.dbapiprovider import IntegrityError

from hausbox.api.access import MUTATING
from hausbox.api.middleware import HttpMiddleware
from hausbox.api.routing import Call, Route, all_routes, client_address
from hausbox.core import values
from hausbox.core.errors import (
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    InsufficientStorage,
    NotFound,
    PayloadTooLarge,
)
from hausbox.core.jsonenc import RawJson
from hausbox.core.storage import is_storage_full
from hausbox.core.jsonenc import dumps as json_bytes

if TYPE_CHECKING:
    from hausbox.auth.principal import Principal
    from hausbox.engine import Engine

log = logging.getLogger("hausbox.http")

JSON_TYPE = "application/json"


def error_response(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> bottle.HTTPResponse:
    return bottle.HTTPResponse(json_bytes(body), status=status, headers={"Content-Type": JSON_TYPE, **(headers or {})})


def build_app(engine: "Engine") -> Callable:
    """The full WSGI callable: REST routes, the WebSocket endpoint, security headers and CORS."""
    app = bottle.Bottle(catchall=True)
    app.config["json.enable"] = False  # we encode (orjson) ourselves
    with _one_compile_per_method(app.router):
        for route in all_routes():
            app.route(route.full_path, method=route.method, callback=_callback(engine, route), name=f"{route.method} {route.path}")
    app.default_error_handler = lambda error: _bottle_error(engine, error)
    return HttpMiddleware(app, websocket=engine.hub.handle, cors_origins=lambda: engine.settings.get("http.corsOrigins"))


@contextmanager
def _one_compile_per_method(router: bottle.Router) -> Iterator[None]:
    """Bottle recompiles a method's combined pattern after every route added: a quadratic number of
    regular expressions, a third of the service's start on a slow board. Compiled once at the end."""
    pending: set[str] = set()
    router._compile = pending.add  # type: ignore[method-assign]  # the instance attribute shadows the method
    try:
        yield
    finally:
        del router._compile
        for method in pending:
            router._compile(method)


def _bottle_error(engine: "Engine", error: bottle.HTTPError) -> bytes:
    """Bottle's own errors (no route, wrong method, unreadable body) as JSON."""
    request = bottle.request
    if error.status_code in (404, 405) and request.method in MUTATING and request.path.startswith("/api/v1/"):
        engine.audit.note_unmatched(request, error.status_code)  # no route matched: no callback saw it
    messages = {404: "Not found", 405: "Method not allowed", 413: "Request body too large"}
    bottle.response.content_type = JSON_TYPE
    if error.status_code >= 500:
        log.error("unhandled error: %s", error.exception or error.body)
        return json_bytes({"error": "Internal server error"})
    return json_bytes({"error": messages.get(error.status_code) or str(error.body or error.status_line)})


@dataclass(slots=True)
class Seen:
    """What a request revealed on its way, for the audit trail: set as each step passes."""

    principal: "Principal | None" = None
    body: Any = None
    call: Call | None = None
    result: Any = None


def _authorize(engine: "Engine", route: Route, request: bottle.BaseRequest, seen: Seen) -> "Principal | None":
    header = request.environ.get("HTTP_AUTHORIZATION", "")
    if route.access == "public":
        seen.principal = engine.auth.principal_or_none(header)
        return seen.principal
    if not engine.auth.has_users():
        raise Forbidden("Setup required", setupRequired=True)
    principal = seen.principal = engine.auth.principal_from_header(header)  # a refused caller is named too
    if route.access == "admin" and principal.role != "admin":
        raise Forbidden("Admin access required")
    return principal


def _count_attempt(engine: "Engine", route: Route, request: bottle.BaseRequest, principal: "Principal | None") -> None:
    """A route that checks a secret counts every request, whatever its body, by address and account."""
    if route.checks_secret:
        account = principal.username if principal is not None and route.access != "public" else None
        engine.auth.attempts.count(address=client_address(request), account=account)


def _read_body(route: Route, request: bottle.BaseRequest) -> Any:
    if route.validator is None:
        return None
    if request.content_length > route.max_body_bytes:
        raise PayloadTooLarge("Request body too large")
    try:
        # The server's input stream, not bottle's body: gevent already decodes a chunked body,
        # which bottle would try to decode a second time.
        raw = request.environ["wsgi.input"].read(route.max_body_bytes + 1)
    except TimeoutError:
        raise ApiError("Request body not received in time", status=408)
    except OSError:  # gevent's reader of a malformed chunked body
        raise BadRequest("Malformed request body")
    if len(raw) > route.max_body_bytes:
        raise PayloadTooLarge("Request body too large")
    if not raw.strip():
        body: Any = {}
    else:
        try:
            body = values.loads(raw)
        except values.UnstorableValue as error:
            raise BadRequest(str(error))
        except ValueError:
            raise BadRequest("Malformed JSON body")
    return route.validator.validate(body)


def _callback(engine: "Engine", route: Route) -> Callable[..., Any]:
    def serve(seen: Seen, params: dict[str, str]) -> Any:
        request = bottle.request
        try:
            # Access first: the write barrier runs before the body is read (spec, Authentication 8).
            principal = _authorize(engine, route, request, seen)
            _count_attempt(engine, route, request, principal)  # after the access check, before the body
            if not all(value.strip() for value in params.values()):
                raise NotFound("Not found")  # a blank id names nothing (Pony would strip it to none and fail)
            body = seen.body = _read_body(route, request)
            seen.call = Call(engine, principal, body, request)
            result = seen.result = route.handler(seen.call, **params)
        except ApiError as error:
            return error_response(error.status, error.body(), error.headers())
        except (TransactionIntegrityError, IntegrityError) as error:
            log.warning("%s %s conflicted: %s", route.method, route.path, error)
            return error_response(409, Conflict("Conflicts with existing data").body())
        except Exception as error:
            if not is_storage_full(error):
                raise
            # SQLite rolled the transaction back: nothing was changed, and reads go on.
            log.error("storage full on %s %s: %s", route.method, route.path, error)
            engine.storage.write_failed()
            return error_response(507, InsufficientStorage("Storage is full: nothing was changed").body())
        if isinstance(result, bottle.HTTPResponse):
            return result
        if isinstance(result, RawJson):
            bottle.response.status = route.status
            bottle.response.content_type = JSON_TYPE
            return result.data
        if result is None:
            bottle.response.status = 204
            return b""
        bottle.response.status = route.status
        bottle.response.content_type = JSON_TYPE
        return json_bytes(result)

    if route.method not in MUTATING:
        return lambda **params: serve(Seen(), params)

    def audited(**params: str) -> Any:
        seen = Seen()
        status = 500  # an exception that escapes becomes bottle's 500
        try:
            response = serve(seen, params)
            status = response.status_code if isinstance(response, bottle.HTTPResponse) else bottle.response.status_code
            return response
        finally:
            engine.audit.note(route, bottle.request, params, seen, status)  # appends a tuple: never waits

    return audited
