"""Entry point: ``python -m hausbox serve`` (also the ``hausbox`` console script)."""

# gevent must patch the standard library before anything else imports it (sockets, threads, locks).
from importlib import metadata

from gevent import monkey


def _patch_all() -> None:
    # patch_all() looks up its plugins' entry points once per patched module: 25 scans of every
    # installed distribution's metadata, a third of a second here and seconds on a slow board.
    # One scan, answered from memory for the duration, is the same lookup.
    scan = metadata.entry_points
    everything = scan()
    metadata.entry_points = lambda **selection: everything.select(**selection)  # type: ignore[assignment]
    try:
        monkey.patch_all()
    finally:
        metadata.entry_points = scan


_patch_all()

import sys  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    from hausbox.cli import run

    return run(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
