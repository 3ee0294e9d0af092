"""The task assets' check `question_complete`, one evaluation per clip (partition).

The UI's Checks tab opens on the check's latest evaluation, whichever clip that was (in a batch: the batch's last
clip), and most clips have no question for a given task. So every evaluation says in words what it found: a clip
without a question passes (nothing to check) with the verdict that explains why, never a bare "none"; the check is
partitioned by clip, so the tab also counts the clips that passed and failed and lists them (its Partitions tab)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import dagster as dg

from hvbench_assets.core.media.paths import resolve
from hvbench_assets.core.tasks.family import TaskFamily
from hvbench_assets.defs.partitions import videos_partitions

CHECK = "question_complete"


def question_check_spec(family: TaskFamily) -> dg.AssetCheckSpec:
    return dg.AssetCheckSpec(
        CHECK, asset=family.asset, partitions_def=videos_partitions,
        description=f"The clip's {family.abbrev} question has options, an answer among them and its rendered question "
                    "video; a clip without a question passes with nothing to check and says why it has none")


def question_check(family: TaskFamily, question: Mapping[str, Any] | None,
                   verdict: Mapping[str, Any]) -> dg.AssetCheckResult:
    """This clip's question is usable: options, an answer among them, its question video on disk. `verdict`: the
    clip's task_candidates row (status, rule, reason)."""
    if question is None or not question.get("options"):
        why = f"{verdict['status']} by rule {verdict['rule']}" + (f": {verdict['reason']}" if verdict["reason"] else "")
        return dg.AssetCheckResult(
            check_name=CHECK, asset_key=family.asset, passed=True,
            description=f"No {family.abbrev} question for this clip ({why}); nothing to check.",
            metadata={"question": "none", "status": verdict["status"], "rule": verdict["rule"] or "",
                      "reason": verdict["reason"] or ""})
    letters = [o["letter"] for o in question["options"]]
    video = resolve(question["video_path"]) if question.get("video_path") else None
    problems = ([] if question.get("answer") in letters else [f"answer {question.get('answer')!r} not among {letters}"]) \
        + ([] if video is not None and video.exists() else [f"question video missing: {video}"]) \
        + ([f"{n} option(s) without text"] if (n := sum(not o.get("text") for o in question["options"])) else [])
    qid = question["question_id"]
    return dg.AssetCheckResult(
        check_name=CHECK, asset_key=family.asset, passed=not problems,
        description=f"{family.abbrev} question {qid}: " + ("; ".join(problems) if problems else
                    f"complete ({len(letters)} options, the answer {question['answer']} among them, its video on disk)."),
        metadata={"question_id": qid, "options": len(letters), "answer": question.get("answer") or "",
                  "problems": "; ".join(problems) or "none"})
