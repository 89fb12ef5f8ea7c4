"""Verifying an export against the commitment of the game's first post (issue 13, finding 7):
a regenerated log, an edited header, players list or log row, and a malformed file all fail,
and a malformed file gets a verdict, not a traceback."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from randomgames import finished_games
from storehelp import OPTION_SETS, feed, first_post_commitment

from bot.audit import export_game, verify_export
from bot.cli import main
from bot.service import Service
from bot.store.models import Game
from bot.store.signing import sign


def finished_game(service: Service, n: int) -> str:
    game = finished_games(random.Random(n), 1, f"verify{n}-", [OPTION_SETS[n % 5]])[0]
    feed(service, game)
    return str(game.args["game_id"])


def exported(service: Service, gid: str) -> dict[str, Any]:
    return json.loads(json.dumps(export_game(service, gid)))  # as read from the file


def failed(export: Any, commitment: str | None, replay: bool = True) -> set[str]:
    return {c.name for c in verify_export(export, commitment=commitment, replay=replay)
            if not c.ok}


def resign(service: Service, gid: str, export: dict[str, Any]) -> None:
    """Sign `export` again with `gid`'s own key: what whoever ran that game can do."""
    with service.db.read() as s:
        game = s.get(Game, gid)
        assert game is not None and game.signing_key
        key = game.signing_key
    body = {k: v for k, v in export.items() if k != "signature"}
    export["signature"]["sig"] = sign(key, body)


def entries(export: dict[str, Any], type_: str) -> list[dict[str, Any]]:
    return [e for e in export["log"] if e["type"] == type_]


def test_a_finished_game_verifies_with_its_published_commitment(service: Service) -> None:
    gid = finished_game(service, 1)
    published = first_post_commitment(service, gid)
    data = exported(service, gid)
    assert data["format"] == "wolfjudge-export/2" and data["signature"]["alg"] == "ed25519"
    assert failed(data, published) == set()
    assert failed(data, published.upper()) == set()
    pubkey = data["signature"]["pubkey"]
    assert entries(data, "GameCreated")[0]["data"]["signing_pubkey"] == pubkey
    assert data["game"]["params"]["signing_pubkey"] == pubkey
    assert failed(data, None) == {"published commitment"}
    assert service.rebuild(gid).ok  # the key in params rebuilds the same GameCreated


def test_a_regenerated_log_fails_against_the_published_commitment(service: Service) -> None:
    """Another game, another seed and key, relabelled as the first and signed with its own
    key: consistent in itself, so only the commitment of the first post tells."""
    real = finished_game(service, 1)
    other = finished_game(service, 2)
    forged = exported(service, other)
    forged["game"]["id"] = forged["game"]["params"]["game_id"] = real
    resign(service, other, forged)
    assert failed(forged, first_post_commitment(service, other)) == set()
    assert failed(forged, first_post_commitment(service, real)) == {"published commitment"}


def test_edits_are_found(service: Service) -> None:
    gid = finished_game(service, 3)
    published = first_post_commitment(service, gid)
    good = exported(service, gid)

    bad = copy.deepcopy(good)
    winners = {"wolves", "village", "black-lovers"} - {bad["game"]["winner"]}
    bad["game"]["winner"] = sorted(winners)[0]
    assert failed(bad, published) == {"signature", "header"}
    resign(service, gid, bad)  # even signed by the game's own key: the log says otherwise
    assert failed(bad, published) == {"header"}

    bad = copy.deepcopy(good)
    bad["players"][0]["forum_name"] = "冒名顶替"
    assert failed(bad, published) == {"signature"}

    bad = copy.deepcopy(good)  # the last words as said and as posted: the replay agrees
    said, posted = entries(bad, "lastwords")[0], entries(bad, "LastWords")[0]
    said["command"]["text"] = posted["data"]["text"] = "我是预言家，3号查杀。"
    assert failed(bad, published) == {"signature"}

    bad = copy.deepcopy(good)  # a row of the log taken out
    del bad["log"][len(bad["log"]) // 2]
    assert {"signature", "log rows", "replay"} <= failed(bad, published)

    bad = copy.deepcopy(good)  # an export of before signatures: never verified
    bad["format"] = "wolfjudge-export/1"
    del bad["signature"]
    assert "signature" in failed(bad, published)


MALFORMED: list[Any] = [
    {}, [], None, 5, "wolfjudge-export/2",
    {"format": "wolfjudge-export/2"},
    {"format": "wolfjudge-export/2", "game": {}, "players": [], "log": 5, "refused": []},
]


def test_malformed_exports_get_a_verdict(service: Service) -> None:
    gid = finished_game(service, 1)
    published = first_post_commitment(service, gid)
    good = exported(service, gid)
    broken = copy.deepcopy(MALFORMED)
    no_log = copy.deepcopy(good)
    del no_log["log"]
    no_seed = copy.deepcopy(good)
    del entries(no_seed, "GameOver")[0]["data"]["seed"]
    bad_row = copy.deepcopy(good)
    del bad_row["log"][0]["data"]
    bad_params = copy.deepcopy(good)
    bad_params["game"]["params"]["start"] = "not a date"
    bad_sig = copy.deepcopy(good)
    bad_sig["signature"]["pubkey"] = "zz"
    bad_roles = copy.deepcopy(good)
    entries(bad_roles, "GameOver")[0]["data"]["roles"] = {"one": "wolf"}
    broken += [no_log, no_seed, bad_row, bad_params, bad_sig, bad_roles]
    for export in broken:
        checks = verify_export(export, commitment=published)
        assert checks and not all(c.ok for c in checks), export
    assert failed(no_seed, published) == {"seed revealed", "signature"}


def test_cli_verify(service: Service, db_url: str, tmp_path: Path,
                    capsys: pytest.CaptureFixture[str]) -> None:
    gid = finished_game(service, 4)
    published = first_post_commitment(service, gid)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(export_game(service, gid), ensure_ascii=False), "utf-8")
    assert main(["verify", str(path), "--commitment", published]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "verified"
    assert main(["verify", str(path)]) == 1
    assert "--commitment" in capsys.readouterr().out
    for garbage in (b"{not json", b"\xff\xfe", b"[]", b'{"log": 5}'):
        path.write_bytes(garbage)
        assert main(["verify", str(path), "--commitment", published]) == 1
        out = capsys.readouterr().out
        assert "FAIL export readable" in out and out.splitlines()[-1] == "NOT verified"
    assert main(["verify", str(tmp_path / "missing.json"), "--commitment", published]) == 1
    assert "NOT verified" in capsys.readouterr().out


def test_ended_early_export_verifies(service: Service) -> None:
    """A game the judge ended (GameEnded, no winner) reveals its seed like GameOver: its
    export verifies against the commitment of the first post."""
    from storehelp import at, classic_game, first_post_commitment

    from engine.commands import JudgeEnd

    classic_game(service, "ended1")
    out = service.submit("ended1", JudgeEnd(reason="人数不足"), now=at(1, 10))
    assert out.accepted
    export = exported(service, "ended1")
    assert export["game"]["status"] == "over" and export["game"]["winner"] is None
    assert "seed" in export["game"]["params"]
    assert failed(export, first_post_commitment(service, "ended1")) == set()
