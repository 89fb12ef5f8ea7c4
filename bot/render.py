"""Events -> Chinese text, from the templates in rulesets/*/templates.yaml."""

from __future__ import annotations

from functools import cache
from typing import Any

from engine.events import Event, Rejection
from rulesets.data import load

RULESET_NAMES = {"classic": "经典", "anomaly": "异常"}


@cache
def _templates(ruleset: str) -> dict[str, dict[str, Any]]:
    common = load("common", "templates")
    own = load(ruleset, "templates") if ruleset != "common" else {}
    return {part: {**common.get(part, {}), **own.get(part, {})}
            for part in ("events", "rejections")}


def _seats(items: Any) -> str:
    items = list(items or [])
    return "、".join(f"{n}号" for n in items) if items else "无"


def _fields(data: dict[str, Any], ruleset: str) -> dict[str, Any]:
    names = load(ruleset, "data")
    role_names = names.get("role_names", {})
    camp_names = names.get("camp_names", {})
    f: dict[str, Any] = {k: v for k, v in data.items()}
    for key, value in data.items():
        if isinstance(value, list) and all(isinstance(x, int) for x in value):
            f[key] = _seats(value)
    target = data.get("target")
    f["has_target"] = target is not None
    f["target_text"] = f"{target}号" if target is not None else (
        "弃权" if "voter" in data else "无")
    f["has_partner"] = data.get("partner") is not None
    f["has_seat"] = data.get("seat") is not None
    f["proxy_text"] = "（法官代投）" if data.get("by_judge") else ""
    f["role_name"] = role_names.get(data.get("role"), data.get("role"))
    f["camp_name"] = camp_names.get(data.get("camp"), data.get("camp"))
    f["winner_name"] = camp_names.get(data.get("winner"), data.get("winner"))
    f["stage_name"] = names.get("stage_names", {}).get(data.get("stage"), data.get("stage"))
    f["mode_text"] = f" 模式{data['mode']}" if data.get("mode") else ""
    f["mode_hint"] = " 模式1或模式2" if data.get("complete") else ""
    f["ruleset_name"] = RULESET_NAMES.get(data.get("ruleset", ""), data.get("ruleset"))
    counts = data.get("counts") or {}
    f["counts_text"] = "、".join(
        f"{'弃权' if int(c) == 0 else f'{c}号'} {n}票"
        for c, n in sorted(counts.items(), key=lambda kv: (-kv[1], int(kv[0])))) or "无有效票"
    cards = data.get("cards") or []
    f["cards_text"] = ("本期牌：" + "、".join(
        f"{c['seat']}号{'黄牌' if c['color'] == 'yellow' else '红牌'}" for c in cards) + "。"
    ) if cards else ""
    roles = data.get("roles") or {}
    f["roles_text"] = "、".join(f"{n}号{role_names.get(r, r)}" for n, r in roles.items())
    f["reconfirm"] = ("你此前的答复已记录，请确认或更改（发送：救 / 毒 / 跳过）。"
                      if data.get("answered") else "请答复（发送：救 座位号、毒 座位号 或 跳过）。")
    return f


def _pick(template: Any, fields: dict[str, Any]) -> str:
    if isinstance(template, str):
        return template
    value = fields.get(template["by"])
    key = str(value).lower() if isinstance(value, bool) else str(value)
    cases = template["cases"]
    return cases.get(key, cases.get("default", ""))


def render_event(event: Event, ruleset: str) -> str:
    template = _templates(ruleset)["events"].get(event.type)
    if template is None:
        return ""  # judge-only bookkeeping events have no player wording
    fields = _fields(event.data, ruleset)
    return _pick(template, fields).format(**fields)


def render_rejection(rejection: Rejection, ruleset: str) -> str:
    template = _templates(ruleset)["rejections"].get(rejection.code, "指令无法执行。")
    return template.format(**_fields(rejection.data, ruleset))


def messages_for(event: Event, seat: int, ruleset: str) -> str | None:
    """What seat `seat` reads of this event (directly, in a group, or publicly), if anything."""
    if not event.audience.reaches(seat):
        return None
    return render_event(event, ruleset) or None
