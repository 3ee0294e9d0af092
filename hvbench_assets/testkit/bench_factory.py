"""A small benchmark in the published HumanVBench layout, with real short videos, for evaluation tests."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from hvbench_assets.core.benchmark import format_choices
from hvbench_assets.testkit.media_factory import moving_square_video

# (task, number of options) - two categories complete, one task with 2 options, one with 5
SPEC = [("Emotion_Recognition", 4), ("Emotion_Temporal_Analysis", 4), ("Attitude_Recognition", 4),
        ("Emotion_Intensity_Compare", 4), ("Human_Count", 4), ("Audio_Visual_Speaker_Matching", 2),
        ("Active_Speaker_Detection", 5)]
ITEMS_PER_TASK = 3
WORDS = ["happy", "sad", "angry", "calm", "surprised", "bored", "afraid", "proud"]


@dataclass(frozen=True)
class ToyItem:
    task: str
    qid: str
    tag: str  # appears in the question, so a fake model can recognise the item
    options: list[str]
    answer: str


def make_benchmark(root: Path, with_audio: bool = True) -> list[ToyItem]:
    """Writes root/<Task>.jsonl and root/<Task>/<Task>_<i>.mp4 (1 s moving square, tone on speech tasks)."""
    root.mkdir(parents=True, exist_ok=True)
    items = []
    for t_idx, (task, n_opt) in enumerate(SPEC):
        lines = []
        for i in range(ITEMS_PER_TASK):
            video = f"{task}/{task}_{i}.mp4"
            moving_square_video(root / video, seconds=1.0, fps=10, size=(96, 64),
                                tone_hz=440.0 if with_audio else None, color=(40 * i, 180, 220 - 30 * t_idx))
            options = [f"{WORDS[(i + k + t_idx) % len(WORDS)]} {k}" for k in range(n_opt)]
            answer = "ABCDE"[(i + t_idx) % n_opt]
            tag = f"[{task}#{i}]"
            item = ToyItem(task, f"{task}_{i}", tag, options, answer)
            items.append(item)
            lines.append(json.dumps({"Question": f"{tag} Which option fits the person?",
                                     "choices": format_choices(options), "Answer": answer,
                                     "Video": video, "Question_id": item.qid}))
        (root / f"{task}.jsonl").write_text("\n".join(lines) + "\n")
    return items


def item_of(prompt: str, items: list[ToyItem]) -> ToyItem:
    tag = re.search(r"\[[A-Za-z_]+#\d+\]", prompt).group(0)
    return next(i for i in items if i.tag == tag)


def options_in(prompt: str) -> list[tuple[str, str]]:
    """(letter, text) as the prompt lists them (rotations change the order)."""
    return re.findall(r"^Option ([A-Z]): (.+)$", prompt, flags=re.MULTILINE)


def letter_of(prompt: str, text: str) -> str:
    return next(letter for letter, t in options_in(prompt) if t == text)


def right_letter(prompt: str, items: list[ToyItem]) -> str:
    item = item_of(prompt, items)
    return letter_of(prompt, item.options["ABCDE".index(item.answer)])
