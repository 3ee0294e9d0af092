"""Modality arms in the report: accuracy per task and arm, a verdict per item, audio-visual tasks that
frames alone answer.

An arm counts an item as answered when more than half of the models that took the arm were right on it
(rotation 0; a model's seeds pooled, majority). The verdict uses the arms asked:

    text right                     -> answerable from text
    frames right and audio right   -> video or audio (either suffices)
    frames right                   -> needs video
    audio right                    -> needs audio
    full right                     -> needs both
    otherwise                      -> not answered

A model whose full arm carried no audio (its registry entry takes none) has its full arm shown as
`full (no audio)` and left out of the verdicts: it is the frames-only request.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hvbench_assets.core.tasks.catalog import AUDIO_TASKS, task_info
from hvbench_assets.core.scoring.metrics import aggregate
from hvbench_assets.core.scoring.report import Table, pct

ARMS: tuple[str, ...] = ("full", "frames", "audio", "text")  # core/evaluation/arms.py asks them
ARM_INPUTS = {"full": "frames + audio", "frames": "frames only", "audio": "audio only", "text": "text only"}
VERDICTS = ("answerable from text", "video or audio", "needs video", "needs audio", "needs both", "not answered")
ARMS_CSV = "item_arms.csv"
FULL_NO_AUDIO = "full (no audio)"
ARM_ORDER = (ARMS[0], FULL_NO_AUDIO, *ARMS[1:])


def run_arm(config: Mapping | None) -> str:
    """The arm of an eval_runs config; runs from before arms existed are full."""
    return (config or {}).get("arm") or "full"


def item_verdict(right: Mapping[str, bool]) -> str:
    """`right`: arm -> answered by the arm's majority, for the arms asked."""
    if right.get("text"):
        return VERDICTS[0]
    if right.get("frames") and right.get("audio"):
        return VERDICTS[1]
    if right.get("frames"):
        return VERDICTS[2]
    if right.get("audio"):
        return VERDICTS[3]
    if right.get("full"):
        return VERDICTS[4]
    return VERDICTS[5]


@dataclass
class ItemArms:
    task: str
    question_id: str
    votes: dict[str, tuple[int, int]]  # arm -> (models right, models asked)
    verdict: str
    frames_by_all: bool  # every model that took the frames arm was right


@dataclass
class ArmsData:
    arms: list[str]  # arms present, in ARMS order
    models: list[str]
    tasks: list[str]
    accuracy: dict[tuple[str, str], dict[str, float]]  # (model, arm label) -> task -> accuracy
    items: list[ItemArms]
    flagged_tasks: dict[str, list[str]] = field(default_factory=dict)  # AV task -> items frames answer for all

    def verdict_counts(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(VERDICTS, 0))
        for it in self.items:
            out[it.task][it.verdict] += 1
        return dict(out)


def build_arms(response_rows: Iterable[Mapping], runs: Sequence[Mapping]) -> ArmsData | None:
    """None unless some run used an arm other than full (the report then has no arms section)."""
    cfg = {r["run_id"]: r.get("config") or {} for r in runs}
    if all(run_arm(c) == "full" for c in cfg.values()):
        return None
    rows = [r for r in response_rows if r["status"] != "failed" and int(r["rotation"]) == 0 and r["run_id"] in cfg]

    def label(run_id: str) -> str:
        arm = run_arm(cfg[run_id])
        return FULL_NO_AUDIO if arm == "full" and not cfg[run_id].get("send_audio", True) else arm

    per_model: dict[tuple[str, str], dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    per_item: dict[tuple[str, str], dict[str, dict[str, list[bool]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for r in rows:
        arm = label(r["run_id"])
        per_model[(r["model"], arm)][r["task"]].append(bool(r["correct"]))
        if arm != FULL_NO_AUDIO:
            per_item[(r["task"], str(r["question_id"]))][arm][r["model"]].append(bool(r["correct"]))
    order = {a: i for i, a in enumerate(ARM_ORDER)}
    accuracy = {k: {t: sum(v) / len(v) for t, v in per_task.items()}
                for k, per_task in sorted(per_model.items(), key=lambda kv: (kv[0][0], order[kv[0][1]]))}
    items = []
    for (task, qid), by_arm in per_item.items():
        votes = {}
        for arm, by_model in by_arm.items():
            rights = [sum(oks) * 2 > len(oks) for oks in by_model.values()]  # each model's majority over seeds
            votes[arm] = (sum(rights), len(rights))
        right = {arm: k * 2 > n for arm, (k, n) in votes.items()}
        frames = votes.get("frames")
        items.append(ItemArms(task, qid, dict(sorted(votes.items(), key=lambda kv: order[kv[0]])), item_verdict(right),
                              bool(frames and frames[1] and frames[0] == frames[1])))
    items.sort(key=lambda it: (_task_key(it.task), it.question_id))
    flagged: dict[str, list[str]] = {}
    for it in items:
        if it.task in AUDIO_TASKS and it.frames_by_all:
            flagged.setdefault(it.task, []).append(it.question_id)
    tasks = sorted({t for acc in accuracy.values() for t in acc}, key=_task_key)
    arms = [a for a in ARM_ORDER if any(k[1] == a for k in accuracy)]
    return ArmsData(arms, sorted({k[0] for k in accuracy}), tasks, accuracy, items, flagged)


def _task_key(task: str) -> tuple[int, str]:
    from hvbench_assets.core.tasks.catalog import TASKS

    names = [t.name for t in TASKS]
    return (names.index(task), task) if task in names else (len(names), task)


def _abbrev(task: str) -> str:
    info = task_info(task)
    return info.abbrev if info else task


def accuracy_table(data: ArmsData) -> Table:
    rows = []
    for (model, arm), acc in data.accuracy.items():
        overall = aggregate(acc).overall
        rows.append([model, arm, ARM_INPUTS.get(arm, "frames (model takes no audio)")]
                    + [pct(acc.get(t)) for t in data.tasks] + [pct(overall)])
    return Table(["Model", "Arm", "Inputs"] + [_abbrev(t) for t in data.tasks] + ["Mean"], rows)


def verdict_table(data: ArmsData) -> Table:
    counts = data.verdict_counts()
    rows = []
    for task in sorted(counts, key=_task_key):
        c = counts[task]
        n = sum(c.values())
        flag = data.flagged_tasks.get(task, [])
        rows.append([_abbrev(task), str(n)] + [str(c[v]) for v in VERDICTS]
                    + [f"{len(flag)}/{n}" if task in AUDIO_TASKS else "-"])
    return Table(["Task", "Items"] + list(VERDICTS) + ["AV items frames-only by every model"], rows)


def notes(data: ArmsData) -> str:
    missing = [a for a in ARMS if a not in data.arms]
    text = ("An arm answers an item when more than half of the models that took it were right (published option "
            "order). Verdicts: text right = answerable from text; frames and audio both right = video or audio; "
            "frames right = needs video; audio right = needs audio; only full right = needs both.")
    if missing:
        text += f" Arms not run: {', '.join(missing)}; verdicts use the arms run."
    if FULL_NO_AUDIO in data.arms:
        text += " `full (no audio)`: models without audio input; their full arm is the frames-only request."
    return text


def flagged_lines(data: ArmsData) -> list[str]:
    out = []
    for task, qids in sorted(data.flagged_tasks.items(), key=lambda kv: _task_key(kv[0])):
        n = sum(1 for it in data.items if it.task == task)
        shown = ", ".join(qids[:10]) + (f" and {len(qids) - 10} more" if len(qids) > 10 else "")
        out.append(f"{_abbrev(task)}: {len(qids)}/{n} audio-visual items answered frames-only by every model "
                   f"({shown})")
    return out


def markdown_section(data: ArmsData) -> str:
    parts = ["## Modality arms", "", notes(data), "", "Accuracy (%) per task and arm:", "",
             accuracy_table(data).markdown(), "", "Item verdicts per task (every item in "
             f"[{ARMS_CSV}]({ARMS_CSV})):", "", verdict_table(data).markdown(), ""]
    flagged = flagged_lines(data)
    parts += ["Flagged audio-visual tasks:", ""] + [f"- {line}" for line in flagged] + [""] if flagged else \
        ["No audio-visual item was answered frames-only by every model.", ""]
    return "\n".join(parts)


def html_section(data: ArmsData) -> str:
    from html import escape

    flagged = flagged_lines(data)
    return ("<h2>Modality arms</h2>" + f"<p>{escape(notes(data))}</p>" + accuracy_table(data).html()
            + f'<p>Item verdicts per task (every item in <a href="{ARMS_CSV}">{ARMS_CSV}</a>):</p>'
            + verdict_table(data).html()
            + ("<h3>Flagged audio-visual tasks</h3><ul>" + "".join(f"<li>{escape(x)}</li>" for x in flagged) + "</ul>"
               if flagged else "<p>No audio-visual item was answered frames-only by every model.</p>"))


def item_rows(data: ArmsData) -> list[dict]:
    """Rows for eval_item_arms: one per item, votes as {arm: [right, asked]}."""
    return [{"task": it.task, "question_id": it.question_id, "verdict": it.verdict,
             "votes": {a: list(v) for a, v in it.votes.items()}, "frames_by_all": it.frames_by_all,
             "audio_visual": it.task in AUDIO_TASKS} for it in data.items]


def write_csv(data: ArmsData, path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["task", "question_id", "verdict"] + [f"{a} right/asked" for a in ARMS] + ["frames_by_all_models"])
        for it in data.items:
            w.writerow([it.task, it.question_id, it.verdict]
                       + [f"{it.votes[a][0]}/{it.votes[a][1]}" if a in it.votes else "" for a in ARMS]
                       + [it.frames_by_all])
