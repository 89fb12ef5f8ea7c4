"""The replay (复盘) as one self-contained HTML page that checks itself (issue 24, part 5):
`/replay/CODE` once the game is over, and `wolfjudge replay GAME -o FILE.html`.

The page carries the game's signed export and the 复盘 (the roles with their 马甲, the
lovers, each phase in the judge's words: bot/chat/recap.py) as JSON, and our own script,
inline (no server, no network: the file works anywhere). The script builds the page with
`textContent` only, and checks in the browser, with WebCrypto: the export's Ed25519 signature,
the seed against the commitment of the first post (SHA-256 of seed, deal and key), the deal
(the ruleset's preset shuffled by the seed's draws, as engine/rng.py does), and every random
choice of the log. `wolfjudge verify` checks the same and replays every command as well.
Its Content Security Policy allows exactly its own script and style (by their hashes)."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from bot.audit import export_game
from bot.chat.recap import phases, roles
from bot.service import Service, event_of
from bot.texts import ruleset_name, t, text_data
from engine.options import validate_options
from engine.payloads import VoteResult
from engine.ruleset import get_ruleset

HERE = Path(__file__).parent
# The page's scripts, in order: the vendored fallbacks (for a browser without WebCrypto or
# without Ed25519 in it: bot/web/static/vendor/README.md), then ours.
SCRIPTS = ("vendor/sha256.min.js", "vendor/nacl.min.js", "replay.js")


@dataclass(frozen=True)
class ReplayPage:
    html: str
    csp: str  # the page's Content Security Policy (also in its own meta tag)


def replay_data(service: Service, code: str) -> dict[str, Any] | None:
    """What the page shows and checks; None while the game is not over (its roles are
    secret until then)."""
    state = service.state(code)
    if not state.over:
        return None
    export = export_game(service, code)
    names = {p["seat"]: p["forum_name"] for p in export["players"]}
    params = export["game"]["params"]
    preset = None
    if params.get("roles") is None:  # dealt from the ruleset's preset (engine/game.py)
        rs = get_ruleset(state.ruleset)
        opts = validate_options(rs.options_model, params.get("options"), rs.camps)
        preset = rs.preset(int(params["players"]), opts)
    return {
        "code": code,
        "title": t("web.replay_title", code=code, ruleset=ruleset_name(state.ruleset)),
        "roles": roles(state, names),
        "phases": [{"title": title, "lines": lines}
                   for title, lines in phases(service.game_log(code), state.ruleset)],
        "votes": _ballots(service.game_log(code)),
        "preset": preset,
        "texts": text_data("web.replay"),
        "export": export,
    }


def _ballots(log: list[Any]) -> list[dict[str, Any]]:
    """Each vote's 票型 as a table (VoteResult: who voted for whom, the counts), by day."""
    out = []
    for row in log:
        if row.kind != "event" or row.type != "VoteResult":
            continue
        data = event_of(row.body).payload()  # (seat keys as numbers)
        assert isinstance(data, VoteResult)
        title = t(f"web.replay_vote.{data.kind}", day=data.day)
        ballots = [[voter, target] for voter, target in sorted(data.effective.items())]
        counts = sorted(data.counts.items(), key=lambda kv: (-kv[1], kv[0]))
        out.append({"title": title, "ballots": ballots, "counts": counts})
    return out


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def replay_page(data: dict[str, Any]) -> ReplayPage:
    env = Environment(loader=FileSystemLoader(HERE / "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    static = HERE / "static"
    scripts = [(static / name).read_text(encoding="utf-8") for name in SCRIPTS]
    style = (static / "replay.css").read_text(encoding="utf-8")
    allowed = " ".join(_hash(s) for s in scripts)
    csp = (f"default-src 'none'; script-src {allowed}; style-src {_hash(style)}; "
           "base-uri 'none'; form-action 'none'")
    html = env.get_template("replay.html").render(data=data, scripts=scripts, style=style,
                                                  csp=csp, t=t)
    return ReplayPage(html, csp)
