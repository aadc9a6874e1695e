"""Entry point: ``python -m hausbox serve`` (also the ``hausbox`` console script)."""

# gevent must patch the standard library before anything else imports it (sockets, threads, locks).
from gevent import monkey

monkey.patch_all()

import sys  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    from hausbox.cli import run

    return run(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
