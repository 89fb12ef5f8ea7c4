"""SQLAlchemy 2 models. The schema itself is made only by the Alembic migrations in migrations/.

Game times (event `at`, deadline `due`, a command's `now`) are the game's naive local times, as
the engine uses them; bookkeeping times (created_at, sent_at, next_attempt_at …) are naive UTC.
JSON columns hold `bot.store.codec` encodings (exact round trip) and are plain `json` on
PostgreSQL, not `jsonb`: jsonb reorders keys, and the engine's dict order is part of the state.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy import false as sa_false
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from bot.gametime import DEFAULT_TIME_ZONE

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def _game_fk() -> ForeignKey:
    return ForeignKey("games.id", ondelete="CASCADE")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class Game(Base):
    __tablename__ = "games"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    ruleset: Mapped[str] = mapped_column(String(32))
    # new_game's keyword arguments, seed included: enough to rebuild the game from its log.
    # The seed is secret until the game ends (the GameOver event reveals it).
    params: Mapped[Any] = mapped_column(JSON)
    commitment: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16), default="active")  # active | over | halted
    winner: Mapped[str | None] = mapped_column(String(32))
    host: Mapped[str | None] = mapped_column(String(128), index=True)  # the hosting account
    judge_contact: Mapped[str | None] = mapped_column(String(128))
    # How much of the game the judge hears by DM (bot/feed.py): all | summary | off
    judge_feed: Mapped[str] = mapped_column(String(8), default="summary",
                                            server_default="summary")
    # Whether seats that are out still get the public announcements by DM (public.dm_out)
    dm_out: Mapped[bool] = mapped_column(Boolean, default=False, server_default=sa_false())
    created_at: Mapped[datetime] = mapped_column(DateTime)
    # The IANA zone of the game's wall clock: the engine's times (and `deadlines.due`) are
    # naive times in it; the scheduler converts them to real instants (bot/gametime.py).
    time_zone: Mapped[str] = mapped_column(String(64), server_default=DEFAULT_TIME_ZONE)
    # The game's Ed25519 private key (raw 32 bytes, hex) that signs its exports; secret, never
    # exported. Its public key is in params and in the commitment. NULL: a game made before.
    signing_key: Mapped[str | None] = mapped_column(String(64))


class Snapshot(Base):
    """The latest state of a game. `version` is the optimistic-concurrency token."""

    __tablename__ = "snapshots"

    game_id: Mapped[str] = mapped_column(String(64), _game_fk(), primary_key=True)
    version: Mapped[int] = mapped_column(Integer)
    last_seq: Mapped[int] = mapped_column(Integer)  # the highest seq in the log
    clock: Mapped[datetime] = mapped_column(DateTime)  # `now` of the last accepted command
    state: Mapped[Any] = mapped_column(JSON)
    updated_at: Mapped[datetime] = mapped_column(DateTime)


UNDO = "undo"  # the kind of a log row undoing a command (bot/undo.py); body {"seq": N}


class LogEntry(Base):
    """The append-only log: each accepted command (kind `command`) followed by its events.

    `body` is the full encoded Command or Event. `version` is the state version that the
    command produced (0 for the events of the game's creation).
    """

    __tablename__ = "events"

    game_id: Mapped[str] = mapped_column(String(64), _game_fk(), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    version: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(8))  # command | event | undo
    type: Mapped[str] = mapped_column(String(64))  # event type, or the command's kind
    at: Mapped[datetime] = mapped_column(DateTime)
    phase: Mapped[str] = mapped_column(String(16))
    audience: Mapped[Any] = mapped_column(JSON)  # {"public", "seats", "group"}; judge: none
    body: Mapped[Any] = mapped_column(JSON)
    msg_id: Mapped[str | None] = mapped_column(String(128))


class InboxMessage(Base):
    """Every incoming message with a transport id, and what came of it (idempotency)."""

    __tablename__ = "inbox"

    game_id: Mapped[str] = mapped_column(String(64), _game_fk(), primary_key=True)
    msg_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    sender: Mapped[str | None] = mapped_column(String(128))
    received_at: Mapped[datetime] = mapped_column(DateTime)  # the command's `now`
    command: Mapped[Any] = mapped_column(JSON)
    outcome: Mapped[str] = mapped_column(String(8))  # accepted | rejected | noop
    version: Mapped[int] = mapped_column(Integer)  # state version after it
    first_seq: Mapped[int | None] = mapped_column(Integer)  # its log rows, when accepted
    last_seq: Mapped[int | None] = mapped_column(Integer)
    rejection: Mapped[Any | None] = mapped_column(JSON)


class Player(Base):
    """A seat and who plays it: WeChat contact id and forum account (马甲)."""

    __tablename__ = "players"
    __table_args__ = (UniqueConstraint("game_id", "contact_id"),)

    game_id: Mapped[str] = mapped_column(String(64), _game_fk(), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    contact_id: Mapped[str | None] = mapped_column(String(128), index=True)
    forum_name: Mapped[str | None] = mapped_column(String(128))


class Room(Base):
    """Where a group's messages go: `public` (the game room / thread) or a group name."""

    __tablename__ = "rooms"

    game_id: Mapped[str] = mapped_column(String(64), _game_fk(), primary_key=True)
    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    room_id: Mapped[str] = mapped_column(String(128))


class Card(Base):
    __tablename__ = "cards"

    game_id: Mapped[str] = mapped_column(String(64), _game_fk(), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    yellow: Mapped[int] = mapped_column(Integer, default=0)
    red: Mapped[bool] = mapped_column(Boolean, default=False)


class DeadlineRow(Base):
    """The state's deadlines, mirrored for the scheduler (what is due, across all games)."""

    __tablename__ = "deadlines"

    game_id: Mapped[str] = mapped_column(String(64), _game_fk(), primary_key=True)
    deadline_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    due: Mapped[datetime] = mapped_column(DateTime, index=True)


class OutboxRow(Base):
    """One message to one recipient, written in the same transaction as its events.

    `dedupe_key` is fixed when the row is written ((game, log seq, target) or the reply to a
    message id), so a resend after a crash carries the same key. `priority`: 0 the answer to
    a person's command (it leaves first), 1 the rest, 2 a summary that waits for its time
    without holding back the recipient's later messages (bot/outbox.py). `turn`: the handling
    of one incoming message or one deadline: its rows are held until the turn ends, then
    merged into one per recipient.
    """

    __tablename__ = "outbox"
    __table_args__ = (Index("ix_outbox_pending", "sent_at", "next_attempt_at"),
                      Index("ix_outbox_turn", "turn"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    dedupe_key: Mapped[str] = mapped_column(String(255), unique=True)
    # None: a chat-layer message outside any game (a lobby reply, an introduction)
    game_id: Mapped[str | None] = mapped_column(String(64), _game_fk(), index=True,
                                                nullable=True)
    # the log row rendered (0: the judge's digest of the creation); None for replies
    seq: Mapped[int | None] = mapped_column(Integer)
    # dm | group | public | judge | page (the public page's copy: written delivered)
    channel: Mapped[str] = mapped_column(String(8))
    target: Mapped[str] = mapped_column(String(160))  # seat:3 | group:wolves | public | judge …
    address: Mapped[str | None] = mapped_column(String(128))  # contact/room id; None: unbound
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(DateTime)
    sent_at: Mapped[datetime | None] = mapped_column(DateTime)
    last_error: Mapped[str | None] = mapped_column(Text)
    priority: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    turn: Mapped[str | None] = mapped_column(String(160))
    # The account that sends a row outside any game (a game's rows go from the game's host)
    host: Mapped[str | None] = mapped_column(String(128))
    # It asks its reader to act (a role card, a duty, a reminder, a card, `代行`'s notice): a
    # page's push reminder goes with it (bot/web/push.py)
    asks: Mapped[bool] = mapped_column(Boolean, default=False, server_default=sa_false())


# The chat layer (bot/chat): games before they start, message ids, seat tokens, room members.


class Lobby(Base):
    """A game from `新游戏` on: its settings while players join, and after `开始` the chat
    layer's own settings of the game (`code` is then also `games.id`)."""

    __tablename__ = "lobbies"

    code: Mapped[str] = mapped_column(String(16), primary_key=True)
    ruleset: Mapped[str] = mapped_column(String(32))
    players: Mapped[int] = mapped_column(Integer)
    options: Mapped[Any] = mapped_column(JSON)  # the engine's options (RULES.md §5)
    chat_options: Mapped[Any] = mapped_column(JSON)  # the bot's own (votes.channel, groups.*)
    judge: Mapped[str] = mapped_column(String(128))
    time_zone: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))  # open | started | cancelled
    created_at: Mapped[datetime] = mapped_column(DateTime)
    end_requested_at: Mapped[datetime | None] = mapped_column(DateTime)
    host: Mapped[str | None] = mapped_column(String(128), index=True)  # the hosting account
    # the judge's own role set (`角色`, one role id a seat); None: the ruleset's preset
    roles: Mapped[Any | None] = mapped_column(JSON)
    # the judge's last chat-layer action that `撤销` can undo (a kick, a room bound): its
    # kind and what undoing it needs; None: none
    undo: Mapped[Any | None] = mapped_column(JSON)
    # the lobby `重开` made of this game once it was over (one per game); None: none yet
    restarted_as: Mapped[str | None] = mapped_column(String(16))
    # the generation of the lobby's join link (bot/web/join.py): `报名链接 重置` starts a new
    # one, and every join link given before is refused
    join_epoch: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class LobbyPlayer(Base):
    __tablename__ = "lobby_players"
    __table_args__ = (UniqueConstraint("code", "forum_name"),)

    code: Mapped[str] = mapped_column(String(16), ForeignKey("lobbies.code", ondelete="CASCADE"),
                                      primary_key=True)
    contact_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    forum_name: Mapped[str] = mapped_column(String(128))
    joined: Mapped[int] = mapped_column(Integer)  # order of joining


class ChatMessage(Base):
    """Every transport message id handled: one seen before is not handled again."""

    __tablename__ = "chat_messages"

    msg_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    sender: Mapped[str] = mapped_column(String(128))
    received_at: Mapped[datetime] = mapped_column(DateTime)


class ChannelMark(Base):
    """A channel's place in what it has handed over, kept across restarts (QQ: the time of the
    newest message the bot had handled everything up to, in epoch seconds; its catch-up reads
    the conversations with a message since). `name`: the channel and the account."""

    __tablename__ = "channel_marks"

    name: Mapped[str] = mapped_column(String(128), primary_key=True)
    value: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[datetime] = mapped_column(DateTime)


class WebLink(Base):
    """A contact's page links (issue 24): a link names the generation it was made in, and
    `网页 重置` starts a new one, so every link given before is refused."""

    __tablename__ = "web_links"

    contact_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    epoch: Mapped[int] = mapped_column(Integer)


class PushSubscription(Base):
    """A browser that asked for push reminders (`提醒我` on a seat's page) for a contact: the
    push service's endpoint and the browser's keys (bot/web/push.py). Dropped when the push
    service says it is gone (404, 410), or by `不再提醒`."""

    __tablename__ = "push_subscriptions"
    __table_args__ = (UniqueConstraint("contact_id", "endpoint_hash"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    contact_id: Mapped[str] = mapped_column(String(128), index=True)
    endpoint_hash: Mapped[str] = mapped_column(String(64))  # SHA-256 of the endpoint
    endpoint: Mapped[str] = mapped_column(Text)
    p256dh: Mapped[str] = mapped_column(String(200))
    auth: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime)


class WebContact(Base):
    """A contact the pages know by its digest (bot/web/links.py), so that a lasting link
    (a judge's home, a player's key) finds it: a judge granted by `wolfjudge judge-link`
    (`creates_games`: may create games, and judges what they create), or a player who
    joined by a lobby's join link (a contact made for that browser, `page:…`)."""

    __tablename__ = "web_contacts"

    contact_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    creates_games: Mapped[bool] = mapped_column(Boolean, default=False,
                                                server_default=sa_false())
    created_at: Mapped[datetime] = mapped_column(DateTime)  # naive UTC


class Secret(Base):
    """The server's own secrets, made once (the key that signs the page links)."""

    __tablename__ = "secrets"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(256))


class SeatToken(Base):
    """A one-time substitution token (`替补 S`): only its SHA-256 is kept."""

    __tablename__ = "seat_tokens"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    game_id: Mapped[str] = mapped_column(String(64), _game_fk(), index=True)
    seat: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    used_by: Mapped[str | None] = mapped_column(String(128))
    used_at: Mapped[datetime | None] = mapped_column(DateTime)


class RoomMember(Base):
    """Who the bot put in (or found in) a game's room, as it last synced it."""

    __tablename__ = "room_members"

    game_id: Mapped[str] = mapped_column(String(64), _game_fk(), primary_key=True)
    room: Mapped[str] = mapped_column(String(32), primary_key=True)  # the group name
    contact_id: Mapped[str] = mapped_column(String(128), primary_key=True)


class RoomStay(Base):
    """A contact's time in a game's room, from `since` until `until` (None: still there; naive
    UTC), as the bot put them in or took them out: a seat's page shows a room's post only if it
    went while its contact was in the room (bot/web)."""

    __tablename__ = "room_stays"
    __table_args__ = (Index("ix_room_stays_game_contact", "game_id", "contact_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    game_id: Mapped[str] = mapped_column(String(64), _game_fk())
    room: Mapped[str] = mapped_column(String(32))  # the group name
    contact_id: Mapped[str] = mapped_column(String(128))
    since: Mapped[datetime] = mapped_column(DateTime)
    until: Mapped[datetime | None] = mapped_column(DateTime)


# The forum vote thread (bot/forum, votes.channel=forum-auto): bound threads and the ledger.


class ForumThread(Base):
    """The vote thread the judge bound (`投票贴`) from `day` on: a later binding replaces it
    from its own day. The bookkeeping of its last reads tells the judge what is unknown."""

    __tablename__ = "forum_threads"

    game_id: Mapped[str] = mapped_column(String(64), _game_fk(), primary_key=True)
    day: Mapped[int] = mapped_column(Integer, primary_key=True)
    tid: Mapped[int] = mapped_column(BigInteger)
    bound_at: Mapped[datetime] = mapped_column(DateTime)  # naive UTC
    last_read_at: Mapped[datetime | None] = mapped_column(DateTime)  # naive UTC, ok or not
    last_ok_at: Mapped[datetime | None] = mapped_column(DateTime)  # game wall clock
    last_error: Mapped[str | None] = mapped_column(Text)
    closed_day: Mapped[int | None] = mapped_column(Integer)  # the last day read at its close


class ForumLine(Base):
    """One floor or 楼中楼 reply as the bot read it: never deleted (a floor deleted on the forum
    later stays, marked `gone`). `pid` is the forum's post id, also the message id under which
    the line's vote enters the engine, so it is applied once."""

    __tablename__ = "forum_ledger"

    game_id: Mapped[str] = mapped_column(String(64), _game_fk(), primary_key=True)
    pid: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    tid: Mapped[int] = mapped_column(BigInteger)
    day: Mapped[int] = mapped_column(Integer, index=True)
    floor: Mapped[int] = mapped_column(Integer)
    sub: Mapped[int] = mapped_column(Integer)  # 0: the floor itself; n: its n-th reply
    parent_pid: Mapped[int | None] = mapped_column(BigInteger)
    author_id: Mapped[int] = mapped_column(BigInteger)
    author: Mapped[str] = mapped_column(String(128))  # the forum account as shown
    seat: Mapped[int | None] = mapped_column(Integer)  # the 马甲's seat, None: not a player
    posted_at: Mapped[datetime] = mapped_column(DateTime)  # game wall clock (the post time)
    text: Mapped[str] = mapped_column(Text)
    parsed: Mapped[Any] = mapped_column(JSON)  # bot.forum.posts.PostVote as a dict
    verdict: Mapped[str] = mapped_column(String(32))  # bot.forum.ledger: the latest verdict
    reason: Mapped[str | None] = mapped_column(String(64))  # why refused / what is asked
    needs_judge: Mapped[bool] = mapped_column(Boolean, default=False)
    decision: Mapped[str | None] = mapped_column(String(16))  # the judge's `判`
    applied: Mapped[bool] = mapped_column(Boolean, default=False)  # entered the engine
    outcome: Mapped[str | None] = mapped_column(String(64))  # the engine's answer
    seen_at: Mapped[datetime] = mapped_column(DateTime)  # naive UTC, first read
    gone: Mapped[bool] = mapped_column(Boolean, default=False)  # missing from a later read


class JudgeSetting(Base):
    """A judge's own defaults for the games they create next (`法官通知`)."""

    __tablename__ = "judge_settings"

    contact_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    judge_feed: Mapped[str] = mapped_column(String(8), default="summary")


# A community's memory (issue 31, docs/records.md): what the records read, written once a game
# is over and its export verifies; never written by a game's own commands.


class GameRecord(Base):
    """One finished game's summary, made from its verified export (bot/records): `outcome`
    won | ended (the judge's 结束) | halted (停局, waiting for a ruling forever) | refused (its
    export did not verify: in no table). `digest` is the SHA-256 of the export's signed header,
    players and log: what ties this row to the signed log (`wolfjudge stats --verify`)."""

    __tablename__ = "game_records"
    __table_args__ = (Index("ix_game_records_host_ended", "host", "ended_at"),)

    game_id: Mapped[str] = mapped_column(String(64), _game_fk(), primary_key=True)
    host: Mapped[str | None] = mapped_column(String(128))  # the game's host: its community
    ruleset: Mapped[str] = mapped_column(String(32))
    players: Mapped[int] = mapped_column(Integer)
    # the board: canonical JSON of the ruleset, seat count, options away from their defaults
    # and the judge's own role set (bot/records/summary.py `board_key`)
    board: Mapped[str] = mapped_column(String(512))
    outcome: Mapped[str] = mapped_column(String(8))
    winner: Mapped[str | None] = mapped_column(String(32))
    day: Mapped[int] = mapped_column(Integer)  # the game day it ended on
    ended_at: Mapped[datetime] = mapped_column(DateTime)  # naive UTC (what seasons compare)
    ended_on: Mapped[date] = mapped_column(Date)  # the date on the game's own clock
    digest: Mapped[str] = mapped_column(String(64))
    last_seq: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str | None] = mapped_column(Text)  # refused: the checks that failed
    recorded_at: Mapped[datetime] = mapped_column(DateTime)


class RecordSeat(Base):
    """A seat of a recorded game: who held it at the end (the binding), its 马甲 and role as
    the signed log has them, its camp at the end, and how it went out. `result`: win | loss
    (None: a game that counts for no rate). The game's host, outcome and end are repeated
    here so that a leaderboard is one aggregate over one index (ix_record_seats_community)."""

    __tablename__ = "record_seats"
    __table_args__ = (Index("ix_record_seats_community", "host", "contact_id", "ended_at",
                            "outcome", "result"),)

    game_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("game_records.game_id", ondelete="CASCADE"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    host: Mapped[str | None] = mapped_column(String(128))
    outcome: Mapped[str] = mapped_column(String(8))
    ended_at: Mapped[datetime] = mapped_column(DateTime)
    contact_id: Mapped[str | None] = mapped_column(String(128), index=True)
    forum_name: Mapped[str | None] = mapped_column(String(128), index=True)
    role: Mapped[str | None] = mapped_column(String(32))
    camp: Mapped[str | None] = mapped_column(String(32))
    result: Mapped[str | None] = mapped_column(String(8))
    out_cause: Mapped[str | None] = mapped_column(String(32))
    out_phase: Mapped[str | None] = mapped_column(String(16))
    yellow: Mapped[int] = mapped_column(Integer, default=0)
    red: Mapped[bool] = mapped_column(Boolean, default=False)


class Season(Base):
    """A season of a community (`赛季 开始 NAME` … `赛季 结束`): the games that ended between
    its start and its end (naive UTC) are its games."""

    __tablename__ = "seasons"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    host: Mapped[str | None] = mapped_column(String(128), index=True)
    name: Mapped[str] = mapped_column(String(32))
    started_at: Mapped[datetime] = mapped_column(DateTime)
    ended_at: Mapped[datetime | None] = mapped_column(DateTime)
    started_by: Mapped[str] = mapped_column(String(128))
    ended_by: Mapped[str | None] = mapped_column(String(128))


class RecordPrivacy(Base):
    """A contact who hides their records (`战绩 隐藏`): 匿名 in every table but the judges'."""

    __tablename__ = "record_privacy"

    contact_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    hidden: Mapped[bool] = mapped_column(Boolean)
    changed_at: Mapped[datetime] = mapped_column(DateTime)


class Simulation(Base):
    """The simulator's numbers for a board (`wolfjudge simulate` with the board's options),
    computed once, beside the real games' (bot/records/balance.py). `status`: done | failed."""

    __tablename__ = "simulations"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    board: Mapped[str] = mapped_column(String(512))
    agent: Mapped[str] = mapped_column(String(16))
    games: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(8))
    result: Mapped[Any | None] = mapped_column(JSON)
    computed_at: Mapped[datetime] = mapped_column(DateTime)
