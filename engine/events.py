"""Events: the only output of the engine. Every event names its audience."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Audience(BaseModel):
    """Who may read an event. The judge reads everything, always.

    `public`: the forum thread / game room. `seats`: private messages to these seats.
    `group`: the name of the WeChat group the message goes to (its members are in `seats`).
    """

    model_config = ConfigDict(frozen=True)

    public: bool = False
    seats: tuple[int, ...] = ()
    group: str | None = None

    @classmethod
    def everyone(cls) -> Audience:
        return cls(public=True)

    @classmethod
    def to(cls, *seats: int) -> Audience:
        return cls(seats=tuple(sorted(set(seats))))

    @classmethod
    def judge(cls) -> Audience:
        return cls()

    def reaches(self, seat: int) -> bool:
        return self.public or seat in self.seats


class Event(BaseModel):
    model_config = ConfigDict(frozen=True)

    type: str
    class_version: int = 1
    at: datetime
    phase: str
    audience: Audience
    data: dict[str, Any] = Field(default_factory=dict)


class Rejection(BaseModel):
    """A refused command: only the sender is told, and nothing changed."""

    model_config = ConfigDict(frozen=True)

    code: str
    data: dict[str, Any] = Field(default_factory=dict)
