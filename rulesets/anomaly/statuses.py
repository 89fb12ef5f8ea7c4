"""The seat statuses of the anomaly ruleset (engine.model.Status), each with the type of its
value: rule code reads `st.status(STAGE)`, writes `st.set_status(STAGE, "mature")`."""

from __future__ import annotations

from engine.model import SkillState, StatusKey
from rulesets.common.shot import SHOT_DUE  # the hunter's, shared with classic's

__all__ = ["CLASS", "DERIVATIVE", "KONGSHOU", "OVERLOAD_NIGHT", "SAVED_CAMP", "SAVED_SKILLS",
           "SHOT_DUE", "STAGE", "WINDOW", "WINDOW_PART"]

STAGE = StatusKey[str]("stage")  # growth, mature, complete (the staged roles)
CLASS = StatusKey[str | None]("class")  # IDENTITY or VILLAGER, for 感染 and 过载
WINDOW = StatusKey[int]("window")  # the 归零 window (a night) the seat went out in
WINDOW_PART = StatusKey[str]("window_part")  # "day" or "night": which part of that window
KONGSHOU = StatusKey[tuple[int, ...]]("kongshou")  # the nights of the guard's 空守 marks
DERIVATIVE = StatusKey[bool]("derivative")  # converted by 感染 (False once cured)
SAVED_SKILLS = StatusKey[dict[str, SkillState]]("saved_skills")  # before the conversion
SAVED_CAMP = StatusKey[str]("saved_camp")
OVERLOAD_NIGHT = StatusKey[int]("overload_night")  # the night 血睿 granted 过载
