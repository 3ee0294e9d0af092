"""AVAD, Audio-Visual Alignment Detection: from which second sound and picture belong together. A clip longer than
8 s with speech, at most 2 people and a visible speaker; the sound is played backwards up to a cut drawn from the
question id among the starts of the clip's thirds. Reliable by construction: not reviewed by default."""

from __future__ import annotations

from dataclasses import dataclass

from hvbench_assets.core.synthesis.checks import Asks
from hvbench_assets.core.tasks import asks
from hvbench_assets.core.tasks.base import BuildContext, Draft
from hvbench_assets.core.tasks.family import SPEECH, Evidence, TaskFamily
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.tasks.rules import (
    SPEAKERS_AS_PEOPLE,
    Option,
    Verdict,
    check_range,
    person_count,
    persons,
    reject,
    speaking_persons,
    speech_verdict,
)


@dataclass(frozen=True)
class AvadParams:
    max_people: int = 2  # fewer than 3
    min_duration_s: float = 8.0  # strictly longer


def select_avad(labels: ClipLabels, p: AvadParams) -> Verdict:
    m: dict = {}
    if v := check_range(m, "duration", "duration", labels.clip.duration_s, lo=p.min_duration_s, lo_open=True, unit="s"):
        return v
    if v := check_range(m, "people", "people", person_count(labels), hi=p.max_people):
        return v
    if v := speech_verdict(labels, "speech", m):
        return v
    speakers = speaking_persons(labels, persons(labels))
    m["speaking_persons"] = [list(s.track_ids) for s in speakers]
    if not speakers:
        return reject("speaker", "speaking persons=0 (L7), need at least 1", m)
    return Verdict(True, "avad", "speech with a visible speaker", m, target=None)


def segment_starts(duration_s: float) -> list[int]:
    """Left ends of three equal segments, rounded to whole seconds."""
    return [int(round(duration_s * k / 3)) for k in range(3)]


def build_avad(ctx: BuildContext) -> Draft:
    starts = segment_starts(ctx.labels.clip.duration_s)
    cut = ctx.rng.choice(starts)
    return Draft(
        question=("The sound of this video is played backwards from the start up to some moment; after it, sound "
                  "and picture belong together. From which second on are sound and picture aligned?"),
        truth=Option(f"From second {cut}", "truth"),
        distractors=[Option(f"From second {s}", "rule") for s in starts if s != cut],
        marking={"kind": "reversed_audio", "cut_s": cut},
        details={"segment_starts": starts, "cut_s": cut},
    )


FAMILY = TaskFamily(
    name="Audio_Visual_Alignment_Detection", abbrev="AVAD", category=SPEECH, asset="audio_visual_alignment_detection",
    labels=("person_count", "audio_tags", "speaker_scores"), ours=("human_tracks",), why_ours=SPEAKERS_AS_PEOPLE,
    marking="reversed_audio",
    select=select_avad, build=build_avad, params=AvadParams(),
    asks=Asks("the second from which sound and picture align", (asks.TIME,)), answer_kind="time",
    truth="seeded cut point", answer_from="a seeded cut point (L7 only gates)",
    evidence=Evidence("aligned", "none"),
    guideline="Sound and lips run together from one point on; before it the audio is reversed. The right "
              "option is the second where speech becomes natural and in sync.",
    reviewed=False,
)
