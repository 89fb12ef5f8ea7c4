"""Game options: RULES.md §5 keys, their defaults, and validation at game creation.

Each ruleset has a pydantic option model (`extra="forbid"`): a subclass of `CommonOptions`, one
field per key. Keys contain dots, so each field's alias is its key and its name the key with the
dots made underscores (`check.bundle_lovers` → `check_bundle_lovers`). A game's state keeps its
options as the plain dict of keys the model dumps (`GameState.options`, in the snapshot as
before); rule code reads the typed model, `ctx.o`.
"""

from __future__ import annotations

import math
import re
from functools import cache
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationError,
    create_model,
)
from pydantic_core import PydanticCustomError


class OptionError(ValueError):
    """An unknown option key or a bad value, reported when the game is created."""


# Every duration option is at most a week (a deadline 19 years away is a typo), and a count of
# yellow cards at most this many (0: never a red card).
MAX_MINUTES = 7 * 24 * 60
MAX_YELLOWS = 20


def duration_minutes(value: Any) -> int:
    """'90min', '1.5h', '1h30min', '2h' or an integer number of minutes."""
    if isinstance(value, bool):
        raise ValueError("a duration, like 90min or 1.5h")
    if isinstance(value, int):
        minutes = value
    else:
        text = str(value).strip().lower().replace(" ", "")
        m = re.fullmatch(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+)(?:min|m))?", text)
        if not text or not m or (m.group(1) is None and m.group(2) is None):
            raise ValueError(f"{value!r} is not a duration, like 90min or 1.5h")
        minutes = round(float(m.group(1) or 0) * 60) + int(m.group(2) or 0)
    if minutes < 0:
        raise ValueError("a duration cannot be negative")
    if minutes > MAX_MINUTES:
        raise ValueError(f"a duration of at most {MAX_MINUTES}min (7 days)")
    return minutes


def _minutes(value: Any) -> int:
    try:
        return duration_minutes(value)
    except ValueError as exc:  # the message as it is, without pydantic's "Value error, "
        raise PydanticCustomError("duration", "{msg}", {"msg": str(exc)}) from None


# A duration option: given as 90min, 1.5h … or minutes; kept as whole minutes.
Minutes = Annotated[int, BeforeValidator(_minutes)]


class Duration:
    """Marker type of a hand-written OptionSpec: validated to whole minutes (Minutes)."""


def opt(key: str, default: Any) -> Any:
    """An option field: its key (the alias) and its default."""
    return Field(default, alias=key)


class Options(BaseModel):
    """The base of the option models: flat keys (aliases), no unknown key, defaults validated
    too (a duration default is written as text)."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)

    # Keys a subclass declares that come, in the stored dict, right after another key (key ->
    # the key it follows), so that a game's options dict keeps the key order it always had.
    placed_after: ClassVar[dict[str, str]] = {}
    # Keys added after games were stored: a game keeps them in its options dict only when set
    # away from their default (`typed_options` gives the default back), so the options, and
    # the snapshots, of every game without them stay what they were
    # (tests/test_stored_games.py). A subclass adds its own to its parent's.
    added_keys: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def keys(cls) -> list[str]:
        """The keys, in the order of the stored dict."""
        keys = [f.alias or name for name, f in cls.model_fields.items()
                if (f.alias or name) not in cls.placed_after]
        for key, after in cls.placed_after.items():
            keys.insert(keys.index(after) + 1, key)
        return keys

    def check(self, camps: tuple[str, ...]) -> None:
        """Checks across values that a type alone cannot say; raise OptionError."""

    def night_deadlines(self) -> dict[str, int | None]:
        """The night actions' deadlines: key -> minutes after the day's close (None: a time
        of the next morning). Each must leave some time to act (checked after `check`)."""
        return {}

    def day_deadlines(self) -> dict[str, int | None]:
        """The duties due a while after a day's close (or, for a seat out at night, after the
        night's resolution): key -> minutes (None: a fixed moment instead). Each must leave
        some time to act too (0 makes them due at once, for a seat exiled at the close)."""
        return {}

    def dump(self) -> dict[str, Any]:
        """The plain dict a game's state keeps (GameState.options)."""
        values = self.model_dump(by_alias=True)
        quiet = {k for k in self.added_keys if values[k] == _defaults(type(self))[k]}
        return {key: values[key] for key in self.keys() if key not in quiet}

    @classmethod
    def parse(cls, given: dict[str, Any], camps: tuple[str, ...] = ()) -> Options:
        """`given` over the defaults; OptionError naming the first bad key (in `given`'s order)."""
        try:
            opts = cls.model_validate(given)
        except ValidationError as exc:
            raise _first_error(cls, given, exc) from None
        opts.check(camps)
        for key, minutes in opts.night_deadlines().items():
            if minutes is not None and minutes < 1:
                raise OptionError(f"{key} must be at least 1min after the close: a night "
                                  "deadline of no length leaves no time to act")
        for key, minutes in opts.day_deadlines().items():
            if minutes is not None and minutes < 1:
                raise OptionError(f"{key} must be at least 1min: a deadline of no length "
                                  "leaves no time to act")
        return opts


class CommonOptions(Options):
    """The keys every ruleset has (RULES.md §5)."""

    check_granularity: Literal["atomic_event", "per_step", "per_phase"] = opt(
        "check.granularity", "atomic_event")
    check_bundle_lovers: StrictBool = opt("check.bundle_lovers", True)
    check_lose_first: StrictBool = opt("check.lose_first", True)
    check_no_unlost_camp: str = opt("check.no_unlost_camp", "judge_ruling")
    surrender_requires: Literal["all_living_members", "any_member", "majority"] = opt(
        "surrender.requires", "all_living_members")
    resolve_locked_actions: StrictBool = opt("resolve.locked_actions", True)
    night_allow_resubmit: StrictBool = opt("night.allow_resubmit", True)
    night_resolve_early: StrictBool = opt("night.resolve_early", True)
    public_reveal_roles_on_out: Literal[False, True, "at_game_end"] = opt(
        "public.reveal_roles_on_out", False)
    # Not in RULES.md §5: publish yellow cards for missed night/setup duties (they reveal that
    # the player had such a duty, so the default keeps them between the player and the judge).
    public_announce_night_cards: StrictBool = opt("public.announce_night_cards", False)
    cards_yellow_to_red: StrictInt = opt("cards.yellow_to_red", 2)
    # Not in RULES.md §5: whether night/setup-duty yellows count toward cards.yellow_to_red.
    # They do by default (P-CARD-1), so a red card after fewer public yellows than the limit
    # tells everyone that the player had a night or setup duty.
    cards_night_yellow_counts_to_red: StrictBool = opt("cards.night_yellow_counts_to_red", True)
    cards_red_lover_partner_dies: StrictBool = opt("cards.red_lover_partner_dies", True)
    lastwords_eligible: Literal["all_except_sent_off", "all", "first_night_and_exiles"] = opt(
        "lastwords.eligible", "all_except_sent_off")
    lastwords_yellow_on_missing: StrictBool = opt("lastwords.yellow_on_missing", False)
    votes_void_vote_yellow: StrictBool = opt("votes.void_vote_yellow", False)
    votes_abstain_as_candidate: StrictBool = opt("votes.abstain_as_candidate", False)
    votes_self_vote: StrictBool = opt("votes.self_vote", True)
    # Not in RULES.md §5: whether `judge notice` also waives the yellow card for not voting.
    votes_notice_waives_yellow: StrictBool = opt("votes.notice_waives_yellow", False)
    # Deadline offsets (RULES.md §4.2, P-DL-6, P-VOTE-6/10); shorter ones make a fast game.
    # the night slots' (a ruleset may give some slots other deadlines)
    deadlines_night_action: Minutes = opt("deadlines.night_action", "90min")
    deadlines_after_exile: Minutes = opt("deadlines.after_exile", "30min")  # handover, shots
    # judge proxy votes until close minus this
    deadlines_proxy_cutoff: Minutes = opt("deadlines.proxy_cutoff", "30min")
    deadlines_change_freeze: Minutes = opt("deadlines.change_freeze", "60min")  # no change in …
    # a PK revote after a tied exile (exile_tie=revote)
    deadlines_revote: Minutes = opt("deadlines.revote", "30min")
    # DM reminder this long before a deadline; 0 = off
    reminders_before: Minutes = opt("reminders.before", "30min")
    # Not in RULES.md §5 (docs/rules-judge.md P-REVIEW): the judge reviews each night's
    # resolution before it is published (`天亮`); the day opens no sooner than this long after
    # the night's last deadline.
    resolve_judge_review: StrictBool = opt("resolve.judge_review", False)
    resolve_review_minutes: Annotated[Minutes, Field(ge=0, le=240)] = opt(
        "resolve.review_minutes", "30min")

    added_keys: ClassVar[frozenset[str]] = frozenset({
        "resolve.judge_review", "resolve.review_minutes"})

    def night_deadlines(self) -> dict[str, int | None]:
        return {"deadlines.night_action": self.deadlines_night_action}

    def day_deadlines(self) -> dict[str, int | None]:
        # the handover and the shot of a seat exiled at the close (P-DL-1, P-DL-6), a PK revote
        # after a tied exile: 0 would give them no time (a random handover with a card, a lost
        # shot, a revote nobody can cast). The others' 0 means something: no reminder, no
        # freeze on changes, proxies until the close.
        return {"deadlines.after_exile": self.deadlines_after_exile,
                "deadlines.revote": self.deadlines_revote}

    def check(self, camps: tuple[str, ...]) -> None:
        if not 0 <= self.cards_yellow_to_red <= MAX_YELLOWS:
            raise OptionError(f"cards.yellow_to_red must be 0 (never) or 1 to {MAX_YELLOWS}")
        allowed = {"judge_ruling", "last_event_reverted", *camps}
        if self.check_no_unlost_camp not in allowed:
            raise OptionError(
                f"bad value {self.check_no_unlost_camp!r} for option 'check.no_unlost_camp': "
                f"one of {', '.join(sorted(allowed))}")


@cache
def _defaults(model: type[Options]) -> dict[str, Any]:
    """Every key's default value, validated (a duration as minutes)."""
    return model.model_validate({}).model_dump(by_alias=True)


def _first_error(model: type[Options], given: dict[str, Any], exc: ValidationError
                 ) -> OptionError:
    by_key: dict[Any, list[Any]] = {}
    for err in exc.errors():
        by_key.setdefault(err["loc"][0] if err["loc"] else None, []).append(err)
    for key, value in given.items():
        errors = by_key.get(key)
        if not errors:
            continue
        if any(e["type"] == "extra_forbidden" for e in errors):
            return OptionError(f"unknown option {key!r}; known options: "
                               f"{', '.join(sorted(model.keys()))}")
        return OptionError(f"bad value {value!r} for option {key!r}: "
                           + "; ".join(e["msg"] for e in errors))
    return OptionError(str(exc))


# Hand-written option specs (the form before the models) -------------------------------------

OptionSpec = dict[str, tuple[Any, Any]]  # key -> (type, default)


class ModelSpec(dict[str, tuple[Any, Any]]):
    """An option model seen as an OptionSpec (key -> (type, default)), for the readers of the
    former `Ruleset.option_spec` mappings; `model` is the option model."""

    model: type[Options]

    def __init__(self, model: type[Options]) -> None:
        super().__init__((f.alias or name, (f.annotation, f.default))
                         for name, f in model.model_fields.items())
        self.model = model


def spec_of(model: type[Options]) -> ModelSpec:
    return ModelSpec(model)


def model_of(spec: type[Options] | OptionSpec) -> type[Options]:
    """The option model of `spec`: itself, the model behind a ModelSpec, or one made from a
    hand-written spec."""
    if isinstance(spec, type):
        return spec
    if isinstance(spec, ModelSpec):
        return spec.model
    strict = {bool: StrictBool, int: StrictInt, Duration: Minutes}
    fields: dict[str, Any] = {
        key.replace(".", "_"): (strict.get(typ, typ), Field(default, alias=key))
        for key, (typ, default) in spec.items()}
    return create_model("SpecOptions", __base__=Options, **fields)


COMMON_OPTIONS: OptionSpec = spec_of(CommonOptions)


def validate_options(spec: type[Options] | OptionSpec, given: dict[str, Any] | None,
                     camps: tuple[str, ...] = ()) -> dict[str, Any]:
    """Merge `given` over the defaults of `spec`; raise OptionError on anything unknown or bad."""
    _check_plain(given or {})
    return model_of(spec).parse(dict(given or {}), camps).dump()


OptionsT = TypeVar("OptionsT", bound=Options)

# The typed options of a game's stored dict: made once per dict (a game's options dict is set by
# new_game and shared, never changed, by every state of the game; see engine.clone.SHARED).
TYPED_CACHE: dict[int, tuple[dict[str, Any], Options]] = {}
TYPED_CACHE_MAX = 1024


def typed_options(model: type[OptionsT], options: dict[str, Any]) -> OptionsT:
    """The model of a stored options dict (keys it does not know are left out)."""
    hit = TYPED_CACHE.get(id(options))
    if hit is not None and hit[0] is options and isinstance(hit[1], model):
        return hit[1]
    known = model.model_fields
    aliases = {f.alias or name for name, f in known.items()}
    typed = model.model_validate({k: v for k, v in options.items() if k in aliases})
    if len(TYPED_CACHE) >= TYPED_CACHE_MAX:
        TYPED_CACHE.clear()
    TYPED_CACHE[id(options)] = (options, typed)  # the dict is kept alive, so its id is not reused
    return typed


MAX_OPTION_TEXT = 64


def _check_plain(given: Any) -> None:
    """Options are a flat map of short scalars (or short lists of them): no NaN, no nesting,
    no megabyte strings."""
    if not isinstance(given, dict) or len(given) > 200:
        raise OptionError("options must be a map of at most 200 keys")
    for key, value in given.items():
        if not isinstance(key, str) or len(key) > MAX_OPTION_TEXT:
            raise OptionError(f"bad option key {str(key)[:MAX_OPTION_TEXT]!r}")
        items = value if isinstance(value, list) and len(value) <= 8 else [value]
        for item in items:
            if isinstance(item, float) and not math.isfinite(item):
                raise OptionError(f"bad value for option {key!r}: not a finite number")
            if not isinstance(item, str | int | float | bool) or len(str(item)) > MAX_OPTION_TEXT:
                raise OptionError(f"bad value for option {key!r}: a short word, number, "
                                  "true/false or a short list of them")
