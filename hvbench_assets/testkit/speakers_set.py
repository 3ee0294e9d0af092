"""The speaker development set (../shared/videos/speakers, truth.json): which panel speaks, each panel's gender and
age. Used by the speaker tests and benchmarks/speaker_accuracy.py.

Panels are side by side, left to right (panel 0 = leftmost face). A face track is mapped to its panel by its face
centre: the clip's track centres are split into as many groups as there are panels at their largest gaps."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from hvbench_assets.testkit import SHARED_VIDEOS

SPEAKERS_DIR = SHARED_VIDEOS / "speakers"


@dataclass(frozen=True)
class SpeakerClip:
    name: str
    panels: tuple[dict, ...]  # {"gender", "age", "source"} left to right
    speaking: tuple[int, ...] | str  # panel indices, or "mix" (every panel at once)
    sound: tuple[str, ...]

    @property
    def path(self) -> Path:
        return SPEAKERS_DIR / f"{self.name}.mp4"

    def speaks(self, panel: int) -> bool:
        return self.speaking == "mix" or panel in self.speaking

    @property
    def speaker_panels(self) -> set[int]:
        return set(range(len(self.panels))) if self.speaking == "mix" else set(self.speaking)

    @property
    def real(self) -> bool:
        return all(p.get("gender") != "drawn character" and "drawn" not in str(p.get("age", "")) for p in self.panels)


def load_truth(root: Path = SPEAKERS_DIR) -> dict[str, SpeakerClip]:
    data = json.loads((root / "truth.json").read_text())
    return {name: SpeakerClip(name, tuple(d["panels"]),
                              d["speaking_panels"] if d["speaking_panels"] == "mix" else tuple(d["speaking_panels"]),
                              tuple(d.get("sound") or ())) for name, d in data.items()}


def panels_of(centres: dict[int, float], n_panels: int) -> dict[int, int]:
    """Track id -> panel index from face centres x: split at the n-1 largest gaps of the sorted centres. Tracks
    fewer than panels: each track takes its rank only when the truth cannot be told apart otherwise (one panel)."""
    order = sorted(centres, key=lambda t: centres[t])
    if n_panels <= 1 or len(order) <= 1:
        return {t: 0 for t in order}
    xs = [centres[t] for t in order]
    gaps = sorted(range(len(xs) - 1), key=lambda i: xs[i + 1] - xs[i], reverse=True)[: n_panels - 1]
    cuts = sorted(gaps)
    out, panel = {}, 0
    for i, t in enumerate(order):
        out[t] = panel
        if panel < len(cuts) and i == cuts[panel]:
            panel += 1
    return out
