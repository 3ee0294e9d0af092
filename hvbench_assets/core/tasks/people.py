"""What the person-recognition families T2H and ATD share: the target described by a model ("The person is ...")
looking at its red-box video."""

from __future__ import annotations

from hvbench_assets.core.synthesis.replies import BadReply, person_sentence
from hvbench_assets.core.tasks.base import BuildContext, Pending
from hvbench_assets.core.tasks.prompts import PERSON_DESCRIPTION


def describe(ctx: BuildContext) -> tuple[str, list[str]] | Pending:
    """(the sentence, its call ids), or the Pending saying why there is none."""
    tids = tuple(ctx.verdict.target_track_ids)
    appearance = " ".join((ctx.labels.by_track("appearance").get(t) or {}).get("text") or "" for t in tids).strip()
    video = ctx.red_box_video(tids)
    answer = ctx.ask(PERSON_DESCRIPTION, video=video, appearance=appearance or "none")
    if not answer.ok:
        return Pending("failed", f"describer call failed: {answer.error}", call_ids=[answer.call_id])
    try:
        return person_sentence(answer.text), [answer.call_id]
    except BadReply as exc:
        return Pending("failed", f"describer reply unusable: {exc}", call_ids=[answer.call_id])
