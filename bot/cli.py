"""`wolfjudge` command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the store (SQLAlchemy) is imported only by the commands that use it
    from bot.records.settings import RecordsSettings
    from bot.service import Service

EXAMPLES = Path(__file__).parent / "examples"
CONSOLE_HELP = """The real bot (same service, database and scheduler) with the terminal as its
transport (docs/spec/CHAT.md "The console transport"). One input line at a time, each handled
completely, every message it causes printed, before the next is read:
  NAME: TEXT               contact NAME sends TEXT to the bot by DM
  NAME@ROOM: TEXT          contact NAME says TEXT in room ROOM (its name as printed)
  /clock YYYY-MM-DD HH:MM  (with --clock) move the clock forward, firing every deadline due
                           on the way in time order, across games
  /advance 90m|2h|1d       the same, by a duration
  blank lines, # ...       ignored
Extensions:
  /room ROOM NAME ...      a room a judge made by hand, with these members (then 绑定 in it)
  /echo TEXT               prints "# TEXT" (a sync marker for drivers)
Output: "→ NAME: TEXT" (a DM), "→ @ROOM: TEXT" (a room post), "+ @ROOM: NAME ..." (room made),
"+ @ROOM NAME" / "- @ROOM NAME" (member added / removed), further lines of a text indented by
two spaces, "# ..." notes (a malformed line gets "# ? ..."). Logs go to standard error.
At end of input it exits 0; started again on the same database it continues every game
(deadlines passed meanwhile fire first; a virtual clock never goes back)."""
RUN_HELP = """Runs the bot on a chat platform (the channel), on the real clock, until
SIGINT/SIGTERM. Settings from the environment (see .env.example):
  WOLFJUDGE_CHANNEL                 the channel, as --channel (default wechat)
  WOLFJUDGE_JUDGES                  the judges' ids on the platform, comma-separated
  WOLFJUDGE_DATABASE_URL            default sqlite:///wolfjudge.db (run `wolfjudge migrate`)
  WOLFJUDGE_SEND_INTERVAL (1.5 s), WOLFJUDGE_SEND_JITTER (1 s), WOLFJUDGE_ROOM_INTERVAL (4 s),
  WOLFJUDGE_DAILY_CAP (3000), WOLFJUDGE_ROOMS_PER_HOUR (2), WOLFJUDGE_TZ (Asia/Shanghai)
  WOLFJUDGE_HOST                    this account's name, when several accounts (one bot and
                                    one gateway each) share one database; empty: the only one
The channel's own settings (`wolfjudge doctor --channel NAME` names each missing one):
  wechat: WeChat through a Wechaty puppet service (gateway/)
  WECHATY_PUPPET_SERVICE_ENDPOINT   host:port of the puppet service (plaintext gRPC)
  WECHATY_PUPPET_SERVICE_TOKEN      its token
  WOLFJUDGE_GATEWAY_STATUS          the gateway's status page for doctor (default: port 8789)
  web: no chat account, the pages are the platform (README "Playing without WeChat")
  WOLFJUDGE_WEB_URL                 the pages' public https address (WOLFJUDGE_JUDGES is not
                                    needed: `wolfjudge judge-link NAME` grants a judge)
With --clock the clock is virtual (tests): /clock and /advance lines on standard input move it,
end of input stops. `wolfjudge console` is the same bot with the terminal as transport."""


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


def _service(args: argparse.Namespace, *, records: bool = False) -> Service:
    """`records`: one that shows records (the console's chat, the pages), with the records'
    setting (WOLFJUDGE_RANK_MIN_GAMES)."""
    from bot.service import Service

    if not records:
        return Service(args.db)
    return Service(args.db, rank_min_games=_records_settings().rank_min_games)


def _records_settings() -> RecordsSettings:
    from pydantic import ValidationError

    from bot.records.settings import RecordsSettings

    try:
        return RecordsSettings()
    except ValidationError as exc:
        raise SystemExit(f"wolfjudge: WOLFJUDGE_RANK_MIN_GAMES: {exc.errors()[0]['msg']}"
                         ) from None


def _doctor(args: argparse.Namespace) -> int:
    from bot.doctor import doctor

    return doctor(sys.stdout, channel=args.channel)


def _migrate(args: argparse.Namespace) -> int:
    from bot.store import Database, head_revision, migrate

    migrate(args.db)
    db = Database(args.db)  # checks the schema as the bot will at start-up
    db.dispose()
    url = db.engine.url.render_as_string(hide_password=True)
    print(f"{url}: schema at {head_revision()} (head)")
    return 0


def _rebuild(args: argparse.Namespace) -> int:
    service = _service(args)
    try:
        report = service.rebuild(args.game, write=args.write)
    finally:
        service.close()
    for problem in report.problems:
        print(f"{args.game}: {problem}")
    if report.ok:
        print(f"{args.game}: rebuilt from the log, equal to the snapshot "
              f"(version {report.snapshot.version})")
    elif args.write and report.state is not None:
        print(f"{args.game}: snapshot replaced by the rebuilt state (version "
              f"{report.state.version})")
        return 0
    return 0 if report.ok else 1


class OutsideWorkingFolder(ValueError):
    pass


def _export_paths(game: str, output: str | None) -> tuple[Path, Path]:
    """The JSON file and the timeline beside it, both inside the working folder: an export
    holds private events, so a game id or -o path must not put it anywhere else."""
    if output is None and any(sep in game for sep in "/\\"):
        raise OutsideWorkingFolder(f"the game id {game!r} cannot name a file (use -o FILE)")
    out = Path(output or f"{game}.json")
    cwd = Path.cwd().resolve()
    try:
        paths = (out, out.with_suffix(".timeline.txt"))
        inside = all(cwd in path.resolve().parents and not path.is_dir()  # symlinks followed
                     for path in paths)
    except (OSError, ValueError):  # no file name (`.`), a NUL byte, a symlink loop
        inside = False
    if not inside:
        raise OutsideWorkingFolder(f"{out} is not a file inside the working folder {cwd}")
    return paths


def _export(args: argparse.Namespace) -> int:
    import json

    from bot.audit import export_game, timeline

    try:
        out, text = _export_paths(args.game, args.output)
    except OutsideWorkingFolder as exc:
        print(f"wolfjudge: refusing to export: {exc}", file=sys.stderr)
        return 2
    service = _service(args)
    try:
        data = export_game(service, args.game)
    finally:
        service.close()
    out.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    text.write_text(timeline(data), encoding="utf-8")
    print(f"wrote {out} ({len(data['log'])} log rows) and {text}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    import json

    from bot.audit import Check, verify_export

    try:
        data = json.loads(Path(args.export).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # unreadable, not UTF-8, not JSON
        checks = [Check("export readable", False, f"{type(exc).__name__}: {exc}")]
    else:
        checks = verify_export(data, commitment=args.commitment, replay=not args.no_replay)
    for check in checks:
        print(check)
    ok = all(c.ok for c in checks)
    print("verified" if ok else "NOT verified")
    return 0 if ok else 1


def _run(args: argparse.Namespace) -> int:
    from bot.chat.live import run

    _logs_to_stderr()
    return run(clock=args.clock, channel_name=args.channel)


def _logs_to_stderr() -> None:
    import logging
    import os

    # WOLFJUDGE_LOG_LEVEL=INFO shows each connection, login and replayed message.
    level = os.environ.get("WOLFJUDGE_LOG_LEVEL", "WARNING").upper()
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, level, logging.WARNING),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def _console(args: argparse.Namespace, *, make_schema: bool = True) -> int:
    from bot.chat.clocked import run
    from bot.service import env_judges
    from bot.store import migrate

    _logs_to_stderr()  # standard output is the transcript
    if make_schema:
        migrate(args.db)  # a fresh database is made; an old one is brought to the schema
    service = _service(args, records=True)
    judges = sorted(set(args.judge) | env_judges())
    try:
        run(service, sys.stdin, sys.stdout, judges=judges, clock=args.clock,
            time_zone=args.tz)
    except BrokenPipeError:  # the reader went away (`| head`); outbox rows not yet printed
        import os  # stay unsent, for the next run

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    finally:
        service.close()
    return 0


def _web(args: argparse.Namespace) -> int:
    from bot.web.server import serve

    service = _service(args, records=True)
    try:
        return serve(service)
    finally:
        service.close()


def _judge_link(args: argparse.Namespace) -> int:
    from bot.web.home import BadName, grant

    try:
        url = grant(args.db, args.name, reset=args.reset, revoke=args.revoke)
    except BadName as exc:
        print(f"wolfjudge judge-link: {exc}", file=sys.stderr)
        return 2
    if args.revoke:
        print(f"{args.name}: may no longer create games; their links stop working (the games "
              f"they judge stay theirs)")
        return 0
    print(url)
    print(f"# {args.name}'s home: keep it secret. It never expires; `wolfjudge judge-link "
          f"{args.name} --reset` prints a new one and this one stops working.", file=sys.stderr)
    return 0


def _replay(args: argparse.Namespace) -> int:
    from bot.web.replay import replay_data, replay_page

    service = _service(args)
    try:
        data = replay_data(service, args.game)
    finally:
        service.close()
    if data is None:
        print(f"{args.game}: the game is not over (its roles are secret until then)",
              file=sys.stderr)
        return 1
    Path(args.output).write_text(replay_page(data).html, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from bot.chat.demo import run_demo

    return run_demo(ruleset=args.ruleset, seed=args.seed, out=sys.stdout,
                    options=args.option)


def _option_pair(text: str) -> tuple[str, object]:
    """`key=value`, the value read as a YAML scalar (true, 3, 45min), as in RULES.md §5."""
    import yaml

    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    try:
        parsed = yaml.safe_load(value) if value.strip() else ""
    except yaml.YAMLError:
        parsed = value
    if not isinstance(parsed, bool | int | str | None):
        parsed = value  # a list or mapping is no option value: let the engine refuse the text
    return key.strip(), parsed


def _simulate(args: argparse.Namespace) -> int:
    import json

    from bot.simulate.run import Spec, report, simulate

    spec = Spec(ruleset=args.ruleset, players=args.players or 12,
                games=args.games, seed=args.seed, agent=args.agents,
                options=dict(args.option))
    progress = not args.no_progress and (args.progress or sys.stderr.isatty())
    try:
        doc = simulate(spec, jobs=max(1, args.jobs), progress=progress)
    except ValueError as exc:
        print(f"wolfjudge simulate: {exc}", file=sys.stderr)
        return 2
    print(report(doc))
    if args.json:
        Path(args.json).write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n",
                                   encoding="utf-8")
    if args.chart:
        from bot.simulate.chart import draw

        draw(doc, args.chart)
    return 0


def _stats(args: argparse.Namespace) -> int:
    """`wolfjudge stats`: a community's records (docs/records.md)."""
    import json
    import os

    from bot.records import stats
    from bot.records.balance import GAMES, Simulations, compute
    from bot.records.book import ALL, RecordBook, Scope
    from bot.texts import t

    host = args.host if args.host is not None else (os.environ.get("WOLFJUDGE_HOST") or None)
    service = _service(args, records=True)  # --min-games, else the setting, else 3
    try:
        book = RecordBook(service, host or None)
        book.sync(None)  # every game over gets its summary (its export verified) first
        if args.verify:
            changed = book.recheck()
            print(t("records.stats.reverified", n=len(changed),
                    games="、".join(g for g, _ in changed)) if changed else
                  t("records.stats.verified", n=len(book.store.recorded(book.host))))
        scope = ALL
        if args.season is not None:
            season = book.season(args.season)
            if season is None:
                print(f"wolfjudge stats: no season {args.season!r}", file=sys.stderr)
                return 2
            scope = Scope(season)
        if args.simulate:
            sims = Simulations(book.store)
            missing = [b.board for b in book.boards(ALL) if not sims.side(b.board).runs
                       and not sims.side(b.board).custom]
            games = args.sim_games or GAMES
            for board in missing:
                compute(book.store, board, games=games, jobs=max(1, args.jobs))
            print(t("records.stats.simulated", n=len(missing), games=games))
        doc = stats.tables(book, scope, min_games=args.min_games)
        print(stats.text(doc, scope))
        if args.json:
            Path(args.json).write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n",
                                       encoding="utf-8")
            print(t("records.stats.wrote", path=args.json))
        if args.csv:
            stats.write_csv(doc, book, Path(args.csv))
            print(t("records.stats.wrote", path=args.csv))
    finally:
        service.close()
    return 0


def _add_stats(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("stats", help="a community's records: leaderboard, every player's "
                                     "record, each board's real win rates beside the "
                                     "simulator's (docs/records.md)")
    p.add_argument("--db", metavar="URL", default=None,
                   help="database URL (default: $WOLFJUDGE_DATABASE_URL, else "
                        "sqlite:///wolfjudge.db)")
    p.add_argument("--host", metavar="NAME", default=None,
                   help="the community: the account's WOLFJUDGE_HOST (default: "
                        "$WOLFJUDGE_HOST; empty: the only or first account)")
    p.add_argument("--season", metavar="NAME", default=None,
                   help="one season's games (default: all games)")
    p.add_argument("--json", metavar="FILE", help="write the tables as JSON")
    p.add_argument("--csv", metavar="FILE", help="write one row a player's game, for a "
                                                 "spreadsheet")
    p.add_argument("--min-games", type=int, default=None,
                   help="the win-rate leaderboard's minimum (default: "
                        "$WOLFJUDGE_RANK_MIN_GAMES, else 3)")
    p.add_argument("--verify", action="store_true",
                   help="export and verify every recorded game again, against its summary")
    p.add_argument("--simulate", action="store_true",
                   help="simulate the boards that have no simulator numbers yet")
    p.add_argument("--sim-games", type=int, default=None,
                   help="games a board (default 2000)")
    p.add_argument("--jobs", type=int, default=1, help="processes for --simulate")
    p.set_defaults(func=_stats)


def _add_simulate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("simulate", help="play many whole games with automatic players and "
                                        "report win rates, game length, causes of going out "
                                        "and rule firings (docs/balance.md)")
    p.add_argument("--ruleset", choices=("classic", "anomaly", "standard"), required=True)
    p.add_argument("--players", type=int, default=None, help="default 12")
    p.add_argument("--option", type=_option_pair, action="append", default=[],
                   metavar="KEY=VALUE", help="a game option (repeatable), as in RULES.md §5")
    p.add_argument("--games", type=int, required=True)
    p.add_argument("--seed", type=int, required=True, help="game i plays from (seed, i) only")
    p.add_argument("--agents", choices=("random", "heuristic"), default="heuristic",
                   help="random: any legal action; heuristic: plausible play (default)")
    p.add_argument("--jobs", type=int, default=1, help="processes (the numbers do not "
                                                       "depend on it)")
    p.add_argument("--json", metavar="FILE", help="write the numbers as JSON")
    p.add_argument("--chart", metavar="FILE.png", help="write a chart for the forum")
    p.add_argument("--progress", action="store_true", help="a progress bar even when "
                                                           "standard error is no terminal")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_simulate)


def _add_store_commands(sub: argparse._SubParsersAction) -> None:
    def db_option(p: argparse.ArgumentParser) -> None:
        p.add_argument("--db", metavar="URL", default=None,
                       help="database URL (default: $WOLFJUDGE_DATABASE_URL, else "
                            "sqlite:///wolfjudge.db)")

    def judge_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--judge", action="append", default=[], metavar="NAME",
                       help="a judge's contact (repeatable; also $WOLFJUDGE_JUDGES)")
        p.add_argument("--tz", metavar="ZONE", default="Asia/Shanghai",
                       help="the time zone of the clock and of new games (default "
                            "Asia/Shanghai)")

    def channel_option(p: argparse.ArgumentParser) -> None:
        from bot.transport.channels import CHANNELS, DEFAULT, ENVIRONMENT

        p.add_argument("--channel", metavar="NAME", choices=sorted(CHANNELS), default=None,
                       help=f"the chat platform: {', '.join(sorted(CHANNELS))} (default: "
                            f"${ENVIRONMENT}, else {DEFAULT})")

    p = sub.add_parser("run", help="run the bot on a chat platform (default WeChat through a "
                                   "Wechaty puppet service; settings from the environment; "
                                   "needs `wolfjudge migrate`)",
                       description=RUN_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    channel_option(p)
    p.add_argument("--clock", metavar="YYYY-MM-DD HH:MM", default=None,
                   help="tests: a virtual clock moved by /clock and /advance lines on stdin")
    p.set_defaults(func=_run)
    p = sub.add_parser("console", help="the bot with the terminal as transport (CHAT.md): "
                                       "lines NAME: TEXT, NAME@ROOM: TEXT, /clock, /advance, "
                                       "/echo, /room",
                       description=CONSOLE_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    db_option(p)
    p.add_argument("--clock", metavar="YYYY-MM-DD HH:MM", default=None,
                   help="a virtual clock starting here (in --tz), moved only by /clock and "
                        "/advance; without it the real clock runs")
    judge_options(p)
    p.set_defaults(func=_console)
    p = sub.add_parser("demo", help="a whole scripted game through the chat layer, printed as "
                                    "the console transcript (temporary SQLite, no set-up)")
    p.add_argument("--ruleset", choices=("classic", "anomaly", "standard"), default="classic")
    p.add_argument("--seed", type=int, default=1, help="the scripted players' choices")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="another option of the game (as 新游戏 takes it), e.g. "
                        "public.channel=room; repeatable")
    p.set_defaults(func=_demo)
    p = sub.add_parser("web", help="the game's pages (the judge's, each seat's): links by "
                                   "`网页`; settings WOLFJUDGE_WEB_URL, _HOST, _PORT, _SECRET")
    db_option(p)
    p.set_defaults(func=_web)
    p = sub.add_parser("judge-link", help="grant NAME the right to create games and print "
                                          "the signed link to their home page (the pages "
                                          "without chat: README, Playing without WeChat)")
    p.add_argument("name", metavar="NAME", help="the judge's name (their contact)")
    p.add_argument("--reset", action="store_true", help="a new link: the old one stops "
                                                       "working (403)")
    p.add_argument("--revoke", action="store_true", help="take the right back; every link "
                                                        "of NAME stops working")
    db_option(p)
    p.set_defaults(func=_judge_link)
    p = sub.add_parser("replay", help="a finished game's 复盘 as one HTML file that checks "
                                      "itself in the browser (signature, seed, deal)")
    p.add_argument("game")
    p.add_argument("-o", "--output", metavar="FILE.html", required=True)
    db_option(p)
    p.set_defaults(func=_replay)
    p = sub.add_parser("doctor", help="check the settings, the database and the channel (WeChat: "
                       "the gateway) before `run` (in Chinese; exit 1 if anything needs doing)")
    channel_option(p)
    p.set_defaults(func=_doctor)
    p = sub.add_parser("migrate", help="create or upgrade the database schema to the latest")
    db_option(p)
    p.set_defaults(func=_migrate)
    p = sub.add_parser("rebuild", help="rebuild a game from its log and compare with its "
                                       "snapshot")
    p.add_argument("game")
    p.add_argument("--write", action="store_true", help="replace the snapshot by the rebuilt "
                                                        "state")
    db_option(p)
    p.set_defaults(func=_rebuild)
    p = sub.add_parser("export", help="write a game's full log as JSON and a Chinese timeline")
    p.add_argument("game")
    p.add_argument("-o", "--output", help="the JSON file (default GAME.json), inside the "
                                          "working folder; the timeline goes beside it as "
                                          ".timeline.txt")
    db_option(p)
    p.set_defaults(func=_export)
    p = sub.add_parser("verify", help="check an export against the commitment published at "
                                      "the start: signature, deal, random choices, replay")
    p.add_argument("export")
    p.add_argument("--commitment", metavar="HEX",
                   help="the seed commitment (SHA-256) from the game's first post")
    p.add_argument("--no-replay", action="store_true",
                   help="skip replaying the commands through this engine")
    p.set_defaults(func=_verify)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="wolfjudge", description="狼人杀 forum game judge")
    sub = parser.add_subparsers(dest="command", required=True)
    scenario = sub.add_parser("scenario", help="scenario files (docs/spec/SCENARIOS.md)")
    scenario_sub = scenario.add_subparsers(dest="action", required=True)
    run = scenario_sub.add_parser("run", help="run scenario files (the bundled examples if none)")
    run.add_argument("files", nargs="*")
    run.set_defaults(func=_scenario_run)
    _add_store_commands(sub)
    _add_simulate(sub)
    _add_stats(sub)
    args = parser.parse_args(argv)
    if args.command in ("migrate", "rebuild", "export", "run", "console", "stats",
                        "judge-link"):
        from bot.store import SchemaError

        try:
            return args.func(args)
        except SchemaError as exc:
            print(f"wolfjudge: {exc}", file=sys.stderr)
            return 2
        except LookupError as exc:  # UnknownGame
            print(f"wolfjudge: no game {exc}", file=sys.stderr)
            return 2
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
