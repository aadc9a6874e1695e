"""``python -m hausbox.updater run <job.json>`` or ``recover <data-dir> <install-root>`` (see the
package docstring)."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

# Everything the helper will need is imported now: once ``current`` is switched, nothing may be
# read from a release that is not the one this interpreter started from.
from hausbox.updater import run as jobs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hausbox.updater", description="hausbox update helper")
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="run the update or restart described by a job file")
    run_parser.add_argument("job", type=Path)
    recover_parser = commands.add_parser("recover", help="roll back an update a power cut interrupted (at boot)")
    recover_parser.add_argument("data_dir", type=Path)
    recover_parser.add_argument("install_root", type=Path)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.command == "run":
        return jobs.run(args.job)
    print(jobs.recover(args.data_dir, args.install_root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
