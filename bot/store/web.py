"""The rows of a game with no chat account (issue 30, bot/web's home, join and room pages): the
contacts the pages know by a lasting link (a judge granted by `wolfjudge judge-link`, a player
who joined by a join link), what a judge's home and a player's key page list, and what was
delivered to a contact outside any game. Every statement those pages need is here."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, func, or_, select
from sqlalchemy.exc import IntegrityError

from bot.store.chat import ROOM_CHANNELS
from bot.store.db import Database, of_host
from bot.store.models import (
    Game,
    Lobby,
    LobbyPlayer,
    OutboxRow,
    Player,
    RoomMember,
    RoomStay,
    WebContact,
    WebLink,
)

HOME_GAMES = 50  # a judge's home lists their latest games
FREE_MESSAGES = 100  # the latest messages outside any game a page shows


@dataclass(frozen=True)
class Known:
    """A contact found by the digest a lasting link names: may it create games, and the
    generation of its links (`网页 重置`, `judge-link --reset`)."""

    contact: str
    creates_games: bool
    epoch: int


@dataclass(frozen=True)
class HomeGame:
    """One of a judge's games as their home lists it."""

    code: str
    ruleset: str
    players: int
    status: str  # the lobby's: open | started | cancelled
    joined: int  # who joined the lobby
    over: bool  # the game is over (its log is final)
    join_epoch: int


@dataclass(frozen=True)
class Seated:
    """A seat a contact holds (or held) in a game."""

    code: str
    seat: int
    active: bool


class WebStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    # contacts known by a lasting link -------------------------------------------------------------
    def know(self, contact: str, digest: str, at: datetime, *, creates_games: bool = False
             ) -> None:
        """`contact` is known by `digest` from now on (a judge granted, a player made by a join
        link); granting an existing contact only adds the right to create games."""
        try:
            with self.db.write() as s:
                row = s.get(WebContact, contact)
                if row is None:
                    s.add(WebContact(contact_id=contact, digest=digest,
                                     creates_games=creates_games, created_at=at))
                elif creates_games:
                    row.creates_games = True
        except IntegrityError:  # two racing to know the same contact: the first one stands
            pass

    def forget(self, contact: str) -> None:
        """A contact made for a join that did not happen (the name was taken …) is dropped,
        unless it joined or sits somewhere meanwhile."""
        with self.db.write() as s:
            row = s.get(WebContact, contact)
            if row is None or row.creates_games:
                return
            busy = s.scalar(select(LobbyPlayer.code).where(
                LobbyPlayer.contact_id == contact).limit(1)) or s.scalar(
                select(Player.game_id).where(Player.contact_id == contact).limit(1))
            if busy is None:
                s.delete(row)

    def withdraw(self, contact: str) -> bool:
        """The right to create games taken back (`judge-link --revoke`); False: it had none.
        The games they judge stay theirs."""
        with self.db.write() as s:
            row = s.get(WebContact, contact)
            if row is None or not row.creates_games:
                return False
            row.creates_games = False
            return True

    def known(self, digest: str) -> Known | None:
        """The contact a lasting link's digest names, with its right and link generation: one
        read whatever the digest (a forged link costs what a good one costs)."""
        with self.db.read() as s:
            row = s.execute(select(WebContact.contact_id, WebContact.creates_games,
                                   WebLink.epoch)
                            .outerjoin(WebLink, WebLink.contact_id == WebContact.contact_id)
                            .where(WebContact.digest == digest)).first()
        if row is None:
            return None
        return Known(row.contact_id, bool(row.creates_games), row.epoch or 0)

    def judges(self) -> int:
        """How many contacts may create games by `wolfjudge judge-link`."""
        with self.db.read() as s:
            return s.scalar(select(func.count()).select_from(WebContact).where(
                WebContact.creates_games.is_(True))) or 0

    # a judge's home -------------------------------------------------------------------------------
    def judged_games(self, contact: str) -> list[HomeGame]:
        """The lobbies and games `contact` judges on this account, any status, latest first."""
        with self.db.read() as s:
            joined = (select(LobbyPlayer.code, func.count().label("n"))
                      .group_by(LobbyPlayer.code).subquery())
            rows = s.execute(
                select(Lobby.code, Lobby.ruleset, Lobby.players, Lobby.status,
                       Lobby.join_epoch, joined.c.n, Game.status.label("game"))
                .outerjoin(joined, joined.c.code == Lobby.code)
                .outerjoin(Game, Game.id == Lobby.code)
                .where(Lobby.judge == contact, of_host(Lobby.host, self.db.host))
                .order_by(Lobby.created_at.desc(), Lobby.code.desc()).limit(HOME_GAMES)).all()
        return [HomeGame(r.code, r.ruleset, r.players, r.status, r.n or 0,
                         r.game is not None and r.game != "active", r.join_epoch or 0)
                for r in rows]

    # a player's key page --------------------------------------------------------------------------
    def seats(self, contact: str) -> list[Seated]:
        """The seats `contact` holds in this account's games, the games under way first, then
        the latest."""
        with self.db.read() as s:
            rows = s.execute(select(Player.game_id, Player.seat, Game.status, Game.created_at)
                             .join(Game, Game.id == Player.game_id)
                             .where(Player.contact_id == contact,
                                    of_host(Game.host, self.db.host))).all()
        ordered = sorted(rows, key=lambda r: (r.status != "active", -r.created_at.timestamp()))
        return [Seated(r.game_id, r.seat, r.status == "active") for r in ordered]

    def lobbies(self, contact: str) -> list[tuple[str, str]]:
        """The open lobbies `contact` joined: (code, 马甲)."""
        with self.db.read() as s:
            return [(c, n) for c, n in s.execute(
                select(LobbyPlayer.code, LobbyPlayer.forum_name)
                .join(Lobby, Lobby.code == LobbyPlayer.code)
                .where(LobbyPlayer.contact_id == contact, Lobby.status == "open",
                       of_host(Lobby.host, self.db.host)).order_by(LobbyPlayer.code))]

    def rooms_in(self, game_id: str, contact: str) -> list[str]:
        """The groups of the game whose room `contact` is in now (checked on each request)."""
        with self.db.read() as s:
            return sorted(s.scalars(select(RoomMember.room).where(
                RoomMember.game_id == game_id, RoomMember.contact_id == contact)))

    # what was delivered outside any game ----------------------------------------------------------
    def inbox(self, contact: str, *, free_only: bool = False, game: str | None = None
              ) -> list[tuple[datetime, str | None, str]]:
        """The latest DMs this account sent `contact` (a lobby's replies, the judge's join
        summaries and feed; `free_only`: those of no game; `game`: that game's), in the order
        they went: (naive UTC, the game, text). Only what went."""
        with self.db.read() as s:
            q = (select(OutboxRow.sent_at, OutboxRow.game_id, OutboxRow.text)
                 .outerjoin(Game, Game.id == OutboxRow.game_id)
                 .where(OutboxRow.address == contact, OutboxRow.sent_at.is_not(None),
                        OutboxRow.channel.not_in(ROOM_CHANNELS),
                        or_(and_(OutboxRow.game_id.is_(None),
                                 of_host(OutboxRow.host, self.db.host)),
                            and_(OutboxRow.game_id.is_not(None),
                                 of_host(Game.host, self.db.host)))))
            if free_only:
                q = q.where(OutboxRow.game_id.is_(None))
            elif game is not None:
                q = q.where(OutboxRow.game_id == game)
            rows = s.execute(q.order_by(OutboxRow.sent_at.desc(), OutboxRow.id.desc())
                             .limit(FREE_MESSAGES)).all()
        return [(r.sent_at, r.game_id, r.text) for r in reversed(rows)]

    def room_posts(self, game_id: str, group: str, contact: str
                   ) -> list[tuple[datetime, str]]:
        """The posts of the game's room `group` that went while `contact` was in it, in the
        order they went (naive UTC, text): the room's page (what the seat's page holds of
        that room, ChatStore.delivered)."""
        with self.db.read() as s:
            rows = s.execute(select(OutboxRow.sent_at, OutboxRow.text).where(
                OutboxRow.game_id == game_id, OutboxRow.sent_at.is_not(None),
                OutboxRow.channel.in_(ROOM_CHANNELS),
                OutboxRow.target.in_((f"group:{group}", group)))
                .order_by(OutboxRow.sent_at, OutboxRow.id)).all()
            stays = s.execute(select(RoomStay.since, RoomStay.until).where(
                RoomStay.game_id == game_id, RoomStay.room == group,
                RoomStay.contact_id == contact)).all()
        return [(at, text) for at, text in rows
                if any(since <= at and (until is None or at < until) for since, until in stays)]
