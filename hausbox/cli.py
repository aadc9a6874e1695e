"""Command line: ``hausbox serve``."""

from __future__ import annotations

import argparse

from hausbox import __version__


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="hausbox", description="hausbox home automation engine")
    parser.add_argument("--version", action="version", version=f"hausbox {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("serve", help="serve the REST + WebSocket API (environment: PORT, HAUSBOX_*)")
    args = parser.parse_args(argv)
    if args.command == "serve":
        import logging

        from hausbox.config import Config
        from hausbox.core.database import SchemaTooNew
        from hausbox.server import serve

        try:
            return serve(Config.from_env())
        except SchemaTooNew as error:
            # A downgrade onto a newer database: refuse to touch it, say so plainly (log file too).
            logging.getLogger("hausbox.database").critical("refusing to start: %s", error)
            return 3
    return 2
