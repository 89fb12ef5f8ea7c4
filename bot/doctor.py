"""`wolfjudge doctor`: what a judge setting up needs to know before `wolfjudge run` (issue 21).

It reads the same settings as `run` and checks, in order: the settings (each missing or bad one
named), the database (reachable; its schema new, current or older), the gateway (its gRPC port
reachable; its status page: WeChat logged in, a bot connected, messages kept, what the puppet
can do, in the words the judges get at login). It opens no gRPC stream of its own: a second
client's stop call would end the running bot's stream. When the status page cannot be read (an
older gateway), what the bot last told the judges at login is shown from the outbox instead.

Read only: it creates nothing (a missing SQLite file stays missing). Exit 0 when nothing needs
doing, 1 otherwise. Every line a person reads is in texts.yaml (`doctor`).
"""

from __future__ import annotations

import json
import os
import socket
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any, TextIO

from pydantic import ValidationError

from bot.capabilities import describe, read_report
from bot.texts import t

STATUS_PORT = 8789  # the gateway's GATEWAY_HTTP_PORT default
TIMEOUT = 3.0
REQUIRED = ("endpoint", "token", "judges")


class Checkup:
    """The lines printed and how many problems they name."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.problems = 0

    def head(self, key: str, **fields: Any) -> None:
        print(t(f"doctor.{key}", **fields), file=self.out)

    def ok(self, key: str, **fields: Any) -> None:
        print("  ✓ " + t(f"doctor.{key}", **fields), file=self.out)

    def bad(self, key: str, **fields: Any) -> None:
        self.problems += 1
        print("  ✗ " + t(f"doctor.{key}", **fields), file=self.out)

    def note(self, text: str) -> None:
        for line in text.splitlines():
            print("    " + line, file=self.out)


def doctor(out: TextIO, timeout: float = TIMEOUT) -> int:
    """Print the checkup; 0 when nothing needs doing."""
    from bot.chat.live import LiveSettings, setting_names

    check = Checkup(out)
    check.head("title")
    settings, values = _settings(check, LiveSettings, setting_names())
    url = _database(check, values.get("database_url") or "sqlite:///wolfjudge.db")
    if settings is not None or values.get("endpoint"):
        _gateway(check, values, url, timeout)
    if check.problems:
        check.head("problems", n=check.problems)
    else:
        check.head("ready")
    return 1 if check.problems else 0


def _one_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]


# settings ----------------------------------------------------------------------------------------
def _settings(check: Checkup, model: Any, names: dict[str, str]
              ) -> tuple[Any, dict[str, Any]]:
    """The settings from the environment (None if any is missing or bad) and the values that
    were good; `names`: each field's environment variable."""
    check.head("settings")
    errors: dict[str, str] = {}
    settings = None
    try:
        settings = model()
    except ValidationError as exc:
        for err in exc.errors():
            loc = str(err["loc"][0]) if err["loc"] else "?"
            field = next((f for f, n in names.items() if n == loc), loc)  # named by its alias
            errors[field] = "missing" if err["type"] == "missing" else _why(err)
    values = {f: v for f, n in names.items() if f not in errors
              and (v := os.environ.get(n)) is not None}
    if settings is not None:
        values = settings.model_dump()
    for field in REQUIRED:
        name = names[field]
        if field in errors:
            if errors[field] == "missing":
                check.bad("missing", name=name, what=t(f"doctor.what.{field}"))
            else:
                check.bad("invalid", name=name, error=errors[field])
        else:
            shown = t("doctor.hidden") if field == "token" else values.get(field)
            check.ok("setting", name=name, value=shown)
    for field, error in errors.items():
        if field not in REQUIRED:
            check.bad("invalid", name=names.get(field, field), error=error)
    if "host" not in errors:
        host = values.get("host")
        check.ok("setting", name=names["host"],
                 value=host if host else t("doctor.single_account"))
    return settings, values


def _why(err: Any) -> str:
    """A validation error in Chinese (pydantic's own messages are English)."""
    kind = err["type"]
    known = {"greater_than_equal", "greater_than", "string_pattern_mismatch", "float_parsing",
             "int_parsing", "string_too_short"}
    return t(f"doctor.why.{kind if kind in known else 'other'}", **(err.get("ctx") or {}))


# the database ------------------------------------------------------------------------------------
def _database(check: Checkup, raw: str) -> str | None:
    """The database's state; its URL if its schema is current (the outbox can be read)."""
    from bot.store.db import schema_state, shown_url
    from bot.store.settings import database_url

    url = database_url(raw)
    try:
        check.head("database", url=shown_url(url))
    except ValueError as exc:
        check.head("database", url=raw)
        check.bad("db_bad_url", error=_one_line(exc))
        return None
    try:
        found = schema_state(url)
    except Exception as exc:
        check.bad("db_unreachable", error=_one_line(exc))
        return None
    if found.state == "new":
        check.ok("db_new")  # not created here: `run` makes it
    elif found.state == "current":
        check.ok("db_current", revision=found.head)
        return url
    elif found.state == "old":
        check.bad("db_old", revision=found.revision, head=found.head)
    else:
        check.bad("db_foreign")
    return None


# the gateway -------------------------------------------------------------------------------------
def _gateway(check: Checkup, values: Mapping[str, Any], url: str | None,
             timeout: float) -> None:
    endpoint = str(values.get("endpoint") or "")
    check.head("gateway", endpoint=endpoint)
    host, _, port = endpoint.rpartition(":")
    if not host or not port.isdigit():
        check.bad("gw_bad_endpoint", endpoint=endpoint)
        return
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        check.bad("gw_unreachable", error=_one_line(exc))
        return
    check.ok("gw_reachable")
    if not values.get("token"):
        return  # (named above) without it the status page cannot be read
    where = str(values.get("gateway_status") or f"{host}:{STATUS_PORT}")
    page, error = _status_page(where, str(values.get("token") or ""), timeout)
    if page is None:
        if error == "401":
            check.bad("gw_token")
            return
        print("  ! " + t("doctor.gw_no_status", where=where, error=error), file=check.out)
        _last_told(check, url, values.get("host"))
        return
    if page.get("loggedIn"):
        check.ok("gw_logged_in")
    else:
        check.bad("gw_not_logged_in")
    check.ok("gw_bot_connected" if page.get("botConnected") else "gw_bot_away",
             kept=int(page.get("kept") or 0))
    caps = read_report(page.get("capabilities"))
    if caps is not None:
        check.note(describe(caps, values.get("host")))


def _status_page(where: str, token: str, timeout: float
                 ) -> tuple[dict[str, Any] | None, str]:
    """The gateway's status page (gateway/status.js), or None and why not."""
    req = urllib.request.Request(f"http://{where}/status",
                                 headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as res:
            page = json.loads(res.read())
    except urllib.error.HTTPError as exc:
        return None, str(exc.code)
    except (OSError, ValueError) as exc:
        return None, _one_line(exc)
    return (page, "") if isinstance(page, dict) else (None, "?")


def _last_told(check: Checkup, url: str | None, host: str | None) -> None:
    """What the bot last told the judges at login (the outbox), if the database has it."""
    if url is None:
        return
    from bot.store.chat import ChatStore
    from bot.store.db import Database

    db = Database(url)
    db.host = host
    try:
        told = ChatStore(db).last_told("chat/capabilities/")
    finally:
        db.dispose()
    if told is None:
        print("    " + t("doctor.never_told"), file=check.out)
        return
    at, text = told
    print("    " + t("doctor.last_told", at=at.strftime("%Y-%m-%d %H:%M UTC")), file=check.out)
    check.note(text)
