"""`wolfjudge doctor`: what a judge setting up needs to know before `wolfjudge run` (issue 21).

It reads the same settings as `run` for the same channel (`--channel NAME`, WOLFJUDGE_CHANNEL,
default `wechat`: bot/transport/channels.py) and checks, in order: the settings (each missing or
bad one named, the channel's first), the database (reachable; its schema new, current or older),
then what the channel checks of its platform. WeChat's (bot/transport/wechaty.py `checks`): the
gateway (its gRPC port reachable; its status page: WeChat logged in, a bot connected, messages
kept, what the puppet can do, in the words the judges get at login). It opens no connection a
running bot would lose: a second gRPC client's stop call would end the running bot's stream.
When the gateway's status page cannot be read (an older gateway), what the bot last told the
judges at login is shown from the outbox instead (`Checkup.last_told`).

Read only: it creates nothing (a missing SQLite file stays missing). Exit 0 when nothing needs
doing, 1 otherwise. Every line a person reads is in texts.yaml (`doctor`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from pydantic import ValidationError

from bot.texts import t

if TYPE_CHECKING:
    from bot.store.db import Database

TIMEOUT = 3.0
T = TypeVar("T")


class Checkup:
    """The lines printed and how many problems they name; what a channel's checks need
    besides its settings: `timeout` (seconds for each network check), `database_url` (the
    database, when its schema is current and the outbox can be read), `host`
    (WOLFJUDGE_HOST)."""

    def __init__(self, out: TextIO, timeout: float = TIMEOUT) -> None:
        self.out = out
        self.problems = 0
        self.timeout = timeout
        self.database_url: str | None = None
        self.host: str | None = None

    def head(self, key: str, **fields: Any) -> None:
        print(t(f"doctor.{key}", **fields), file=self.out)

    def ok(self, key: str, **fields: Any) -> None:
        print("  ✓ " + t(f"doctor.{key}", **fields), file=self.out)

    def bad(self, key: str, **fields: Any) -> None:
        self.problems += 1
        print("  ✗ " + t(f"doctor.{key}", **fields), file=self.out)

    def warn(self, key: str, **fields: Any) -> None:
        """Worth knowing, not a problem."""
        print("  ! " + t(f"doctor.{key}", **fields), file=self.out)

    def note(self, text: str) -> None:
        for line in text.splitlines():
            print("    " + line, file=self.out)

    def read(self, query: Callable[[Database], T]) -> T | None:
        """`query(db)` on the database, as this account (WOLFJUDGE_HOST) sees it; None when
        its schema is not current (nothing is read)."""
        if self.database_url is None:
            return None
        from bot.store.db import Database

        db = Database(self.database_url)
        db.host = self.host
        try:
            return query(db)
        finally:
            db.dispose()

    def last_told(self) -> None:
        """What the bot last told the judges at login (the outbox), if the database has it."""
        if self.database_url is None:
            return
        from bot.store.chat import ChatStore

        told = self.read(lambda db: ChatStore(db).last_told("chat/capabilities/"))
        if told is None:
            print("    " + t("doctor.never_told"), file=self.out)
            return
        at, text = told
        print("    " + t("doctor.last_told", at=at.strftime("%Y-%m-%d %H:%M UTC")),
              file=self.out)
        self.note(text)


def doctor(out: TextIO, timeout: float = TIMEOUT, channel: str | None = None) -> int:
    """Print the checkup of `channel` (None: WOLFJUDGE_CHANNEL's, else WeChat's); 0 when
    nothing needs doing."""
    from bot.chat.live import common_settings
    from bot.transport.channels import ENVIRONMENT, chosen
    from bot.transport.channels import channel as load_channel

    check = Checkup(out, timeout)
    check.head("title")
    name = chosen(channel)
    entry = load_channel(name)  # (an unknown name is refused by the CLI before)
    check.head("settings")
    check.ok("setting", name=ENVIRONMENT, value=name)
    _settings, values = settings_checked(check, (entry.settings, common_settings(entry)))
    check.host = values.get("host")
    check.database_url = _database(check, values.get("database_url") or "sqlite:///wolfjudge.db")
    if entry.checks is not None:
        entry.checks(check, values)
    if check.problems:
        check.head("problems", n=check.problems)
    else:
        check.head("ready")
    return 1 if check.problems else 0


def _one_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]


# settings ----------------------------------------------------------------------------------------
def environment_names(model: Any) -> dict[str, str]:
    """Each setting's field and its environment variable (what a message names)."""
    return {f: str(info.validation_alias.choices[0])
            for f, info in model.model_fields.items()}


def settings_checked(check: Checkup, models: Sequence[Any]) -> tuple[list[Any], dict[str, Any]]:
    """Each model's settings from the environment (None for one with a missing or bad
    setting) and every value that was good, by field name (a secret's in clear). Printed:
    each required setting (a secret as set), each bad one, and the account's name."""
    loaded: list[Any] = []
    errors: dict[str, str] = {}
    values: dict[str, Any] = {}
    names: dict[str, str] = {}
    required: list[str] = []
    hidden: set[str] = set()
    for model in models:
        own = environment_names(model)
        names.update(own)
        required += [f for f, info in model.model_fields.items() if info.is_required()]
        hidden |= {f for f, info in model.model_fields.items() if info.repr is False}
        settings = None
        bad: dict[str, str] = {}
        try:
            settings = model()
        except ValidationError as exc:
            for err in exc.errors():
                loc = str(err["loc"][0]) if err["loc"] else "?"
                field = next((f for f, n in own.items() if n == loc), loc)  # by its alias
                bad[field] = "missing" if err["type"] == "missing" else _why(err)
        loaded.append(settings)
        errors.update(bad)
        if settings is not None:
            values.update(settings.model_dump())
        else:
            values.update({f: v for f, n in own.items() if f not in bad
                           and (v := os.environ.get(n)) is not None})
    for field in required:
        name = names[field]
        if field in errors:
            if errors[field] == "missing":
                check.bad("missing", name=name, what=t(f"doctor.what.{field}"))
            else:
                check.bad("invalid", name=name, error=errors[field])
        else:
            shown = t("doctor.hidden") if field in hidden else values.get(field)
            check.ok("setting", name=name, value=shown)
    for field, error in errors.items():
        if field not in required:
            check.bad("invalid", name=names.get(field, field), error=error)
    if "host" not in errors and "host" in names:
        host = values.get("host")
        check.ok("setting", name=names["host"],
                 value=host if host else t("doctor.single_account"))
    return loaded, values


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
