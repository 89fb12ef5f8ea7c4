"""The records' one setting (docs/records.md): `wolfjudge run` reads it with its others
(`LiveSettings` extends this), `wolfjudge stats` and `wolfjudge web` on their own."""

from __future__ import annotations

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

MIN_GAMES = 3  # the win-rate leaderboard's minimum of counted games, by default


class RecordsSettings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    rank_min_games: int = Field(MIN_GAMES, ge=1, le=1000,
                                validation_alias=AliasChoices("WOLFJUDGE_RANK_MIN_GAMES"))
