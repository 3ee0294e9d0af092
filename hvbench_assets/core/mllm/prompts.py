"""Every prompt hvbench sends to an MLLM to describe a clip, in one place.

A `Prompt` holds the text AND what is sent with it (frame count, sampling, request params): all of
it changes the answer, so all of it goes into `fingerprint`, which each asset puts into its
code_version. Editing one prompt marks exactly the assets that use it stale.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Prompt:
    name: str
    system: str | None
    user: str
    n_frames: int = 8  # frames sampled from the clip (then capped by the model's max_frames)
    fps: float | None = None  # set: one frame per 1/fps s, at most n_frames; None: n_frames evenly spaced
    params: dict = field(default_factory=dict)

    @property
    def fingerprint(self) -> str:
        """Short hash of everything that shapes the request."""
        blob = json.dumps(asdict(self), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


_DESCRIBER_SYSTEM = (
    "You write factual descriptions of short video clips for a dataset about people. "
    "Report only what is visible in the frames; if something cannot be seen, say so instead of guessing. "
    "Write plain prose without lists, headings or preamble."
)

APPEARANCE = Prompt(
    name="appearance",
    system=_DESCRIBER_SYSTEM,
    user=(
        "The frames are taken in order from a clip cropped around one person's body. "
        "Describe this person so that a reader could pick them out of a crowd: apparent gender and age "
        "group, hair, clothing (garments, colours, patterns), accessories and body posture. The crop may "
        "include parts of other people; describe only the person in the centre. Then state in one sentence "
        "what this person does during the clip. "
        "Use at most 90 words."
    ),
    n_frames=8,
    params={"temperature": 0.0, "max_tokens": 256},
)

FACIAL_DESCRIPTION = Prompt(
    name="facial_description",
    system=_DESCRIBER_SYSTEM,
    user=(
        "The frames are taken in order from a clip cropped around one person's face. "
        "Describe the facial expression and the emotion it suggests, and how it develops from the first "
        "frame to the last: name each emotion you see (for example happy, sad, angry, surprised, fearful, "
        "disgusted, contemptuous, calm), in the order it appears, with the visible cues (mouth, eyes, brows, "
        "head movement). If the expression stays the same, say that it does not change. "
        "Use at most 90 words."
    ),
    n_frames=12,
    params={"temperature": 0.0, "max_tokens": 256},
)

VIDEO_CAPTION = Prompt(
    name="video_caption",
    system=_DESCRIBER_SYSTEM,
    user=(
        "The frames are taken in order from one video clip. Summarise the clip in three parts: "
        "the setting (place, light, atmosphere), the people (how many, what distinguishes each), and the "
        "events in the order they happen, including any interaction between people. "
        "Use at most 120 words."
    ),
    n_frames=16,
    params={"temperature": 0.0, "max_tokens": 320},
)

REAL_HUMAN = Prompt(
    name="real_human",
    system="You check face crops for a dataset that must contain only real, living people filmed by a camera.",
    user=(
        "The frames are taken in order from a clip cropped around one face. Is this face a real human being "
        "filmed directly? Answer no when it is drawn, painted, animated or computer-rendered, a doll, mask or "
        "statue, a printed photo or poster, or a person shown on a screen inside the scene. Reply with JSON "
        'only: {"real": true or false, "confidence": a number from 0.5 to 1, "what": a few words on what the '
        "face is}."
    ),
    n_frames=4,
    params={"temperature": 0.0, "max_tokens": 80},
)

PROMPTS = {p.name: p for p in (APPEARANCE, FACIAL_DESCRIPTION, VIDEO_CAPTION, REAL_HUMAN)}
