"""Every registered route, with its path parameters filled, for tests that walk the whole API."""

from __future__ import annotations

import re

from hausbox.api.routing import Route, all_routes

_PARAM = re.compile(r"<[^>]+>")
MISSING_ID = "00000000-0000-4000-8000-00000000dead"


def concrete_path(route: Route) -> str:
    return _PARAM.sub(MISSING_ID, route.path)


def routes() -> list[Route]:
    return all_routes()


def route_id(route: Route) -> str:
    return f"{route.method} {route.path}"
