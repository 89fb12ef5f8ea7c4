"""A simulation's JSON as a Markdown section for docs/balance.md (`python -m
bot.simulate.markdown FILE.json ...`): the command that made it, then the tables."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bot.simulate.stats import texts


def command(doc: dict[str, Any], jobs: int = 2) -> str:
    opts = "".join(f" --option {k}={v if isinstance(v, str) else json.dumps(v)}"
                   for k, v in doc["options"].items())
    return (f"wolfjudge simulate --ruleset {doc['ruleset']} --players {doc['players']}{opts} "
            f"--games {doc['games']} --seed {doc['seed']} --agents {doc['agent']} "
            f"--jobs {jobs}")


def section(doc: dict[str, Any]) -> str:
    t = texts()
    out = ["```", command(doc), "```", "",
           "| 阵营 | 胜局 | 胜率 | 95% 区间 (Wilson) |", "| --- | ---: | ---: | --- |"]
    for camp, w in doc["wins"].items():
        out.append(f"| {t['camps'].get(camp, camp)} | {w['wins']} | {w['rate']:.1%} | "
                   f"{w['ci95'][0]:.1%} – {w['ci95'][1]:.1%} |")
    d = doc["days"]
    out += ["", f"对局长度（游戏日）：平均 {d['mean']:.2f}，中位数 {d['median']}，"
                f"最短 {d['min']}，最长 {d['max']}。", "",
            "| 出局原因 | 每局平均人数 |", "| --- | ---: |"]
    for cause, o in sorted(doc["outs"].items(), key=lambda kv: -kv[1]["total"]):
        out.append(f"| {t['causes'].get(cause, cause)} (`{cause}`) | {o['mean']:.2f} |")
    out += ["", "| 规则 | 触发过的对局 | 95% 区间 | 每局平均次数 |", "| --- | ---: | --- | ---: |"]
    for key, r in doc["rules"].items():
        out.append(f"| {doc['counted_rules'][key]} (`{key}`) | {r['share']:.2%} | "
                   f"{r['ci95'][0]:.2%} – {r['ci95'][1]:.2%} | {r['mean']:.3f} |")
    return "\n".join(out)


if __name__ == "__main__":
    for path in sys.argv[1:]:
        print(section(json.loads(Path(path).read_text(encoding="utf-8"))))
        print()
