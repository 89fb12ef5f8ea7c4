"""`wolfjudge` command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXAMPLES = Path(__file__).parent / "examples"


def _scenario_run(args: argparse.Namespace) -> int:
    from bot.scenario import run_files

    paths = [Path(p) for p in args.files] or sorted(EXAMPLES.glob("*.yaml"))
    if not paths:
        print("no scenario files given", file=sys.stderr)
        return 2
    failed = 0
    for result in run_files(paths):
        print(result)
        failed += not result.ok
    print(f"{len(paths) - failed} passed, {failed} failed")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="wolfjudge", description="狼人杀 forum game judge")
    sub = parser.add_subparsers(dest="command", required=True)
    scenario = sub.add_parser("scenario", help="scenario files (shared/SCENARIOS.md)")
    scenario_sub = scenario.add_subparsers(dest="action", required=True)
    run = scenario_sub.add_parser("run", help="run scenario files (the bundled examples if none)")
    run.add_argument("files", nargs="*")
    run.set_defaults(func=_scenario_run)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
