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
        from hausbox.config import Config
        from hausbox.server import serve

        return serve(Config.from_env())
    return 2
