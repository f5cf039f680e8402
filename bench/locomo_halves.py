"""The tuning half, the held-out half and the whole of a ``hybrid-memory eval locomo --out`` report.

    python bench/locomo_halves.py REPORT.json [REPORT.json ...]

Prints, for categories 1-4, R@10, hit@1, MRR, nDCG@10 and the multi-hop and
open-domain R@10 of the server's rankings; the tuning half is the even-numbered
conversations of locomo10.json (conv-26, conv-41, ...), as in ``--half tune``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from recall_ablation import mean, metrics

SERVER = "hybrid-memory"


def halves(report: dict[str, Any], run: str = SERVER) -> dict[str, list[dict[str, float]]]:
    order: list[str] = []
    for q in report["questions"]:
        conv = q["key"].split("#")[0]
        if conv not in order:
            order.append(conv)
    out: dict[str, list[dict[str, float]]] = {"tune": [], "held-out": [], "all": []}
    for q in report["questions"]:
        if q["category"] not in (1, 2, 3, 4):
            continue
        ranked = next(iter(q["rankings"].values())) if run not in q["rankings"] else q["rankings"][run]
        row = {"category": q["category"], **metrics(ranked, q["evidence"])}
        half = "tune" if order.index(q["key"].split("#")[0]) % 2 == 0 else "held-out"
        out[half].append(row)
        out["all"].append(row)
    return out


def main(paths: list[str]) -> int:
    print("| report | half | R@10 | hit@1 | MRR | nDCG@10 | multi-hop R@10 | open-domain R@10 |")
    print("|---|---|---|---|---|---|---|---|")
    for path in paths:
        report = json.loads(Path(path).read_text())
        runs = [r for r in report["questions"][0]["rankings"] if r.startswith(SERVER)] or [SERVER]
        for run, (name, rows) in ((r, part) for r in runs for part in halves(report, r).items()):
            m = mean(rows)
            multi = mean([r for r in rows if r["category"] == 1])
            open_domain = mean([r for r in rows if r["category"] == 3])
            print(
                f"| {Path(path).stem} {run} | {name} | {m['R@10']:.3f} | {m['hit@1']:.3f} | {m['MRR']:.3f} | "
                f"{m['nDCG@10']:.3f} | {multi['R@10']:.3f} | {open_domain['R@10']:.3f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
