"""Speaker ground truth built from real clips: single talking heads cut from ../shared/videos placed side
by side, with a chosen soundtrack (one voice, two voices, silence) and optionally a frozen face.

Used by the speaker tests and benchmarks/speaker_accuracy.py. The panels' ground truth comes from the
shared clips' README and the existing speaker tests: the man speaks throughout 0-5 s of man_talking_head;
the woman facing the camera in two_people_talking talks from 13 s on (VAD hears speech in 57 % of 13-17 s
and almost none before 11 s). The girl braiding her hair is mostly hidden in the crop used here, but L1
finds part of her face at the crop's right edge from about 1.3 s: a face that does not talk. The woman is
a hard case: she exclaims and laughs with her head pulled by the braiding, and covers her face at 16.5 s."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hvbench_assets.core.media import SAMPLE_RATE, iter_frames, load_audio, write_video
from hvbench_assets.core.media.encode import constant_rate

FPS = 30.0  # two_people_talking's own rate: dropping frames (30 -> 25) would jolt its mouth motion


@dataclass(frozen=True)
class Panel:
    """A region of a shared clip over a time window, scaled so its height is the composite's."""

    name: str
    clip: str  # file name in ../shared/videos
    start_s: float
    crop: tuple[int, int, int, int] | None  # x1, y1, x2, y2 in source pixels; None = whole frame
    faces: int  # visible faces in the panel
    bystander_from: float | None = None  # a face centred right of this share of the width is someone else



# crops measured from L1's face boxes on these windows (the face stays inside during the window)
MAN = Panel("man", "man_talking_head.mp4", 0.0, None, 1)
WOMAN = Panel("woman", "two_people_talking.mp4", 13.0, (20, 60, 280, 320), 1, bystander_from=0.8)
CHILDREN = Panel("children", "two_children.mp4", 0.0, None, 2)
# the same woman at later moments (she keeps talking to 22 s): more chances for her lips to meet another voice
WOMAN_15 = Panel("woman", "two_people_talking.mp4", 15.0, (20, 60, 280, 320), 1, bystander_from=0.8)
WOMAN_18 = Panel("woman", "two_people_talking.mp4", 18.0, (20, 60, 280, 320), 1, bystander_from=0.8)


@dataclass(frozen=True)
class Scene:
    """Panels left to right, whose voices are heard, which panels are frozen on their first frame."""

    name: str
    panels: tuple[Panel, ...]
    voices: tuple[str, ...]  # panel names whose own audio is mixed into the soundtrack
    frozen: tuple[str, ...] = ()

    def speaking(self) -> set[str]:
        """Ground truth: a panel speaks when its voice is heard and its face moves."""
        return {p.name for p in self.panels if p.name in self.voices and p.name not in self.frozen}


SCENES = (
    Scene("man_voice", (MAN, WOMAN), ("man",)),
    Scene("woman_voice", (MAN, WOMAN), ("woman",)),
    Scene("two_voices", (MAN, WOMAN), ("man", "woman")),
    Scene("silence", (MAN, WOMAN), ()),
    Scene("still_man_voice_over", (MAN, WOMAN), ("man",), frozen=("man",)),
    Scene("voice_over_woman_15s", (MAN, WOMAN_15), ("man",), frozen=("man",)),
    Scene("voice_over_woman_18s", (MAN, WOMAN_18), ("man",), frozen=("man",)),
    Scene("voice_over_children", (CHILDREN, MAN), ("man",), frozen=("man",)),
    Scene("still_woman", (MAN, WOMAN), ("man",), frozen=("woman",)),
    Scene("children_mouthing", (CHILDREN, MAN), ("man",)),
    Scene("woman_and_children", (WOMAN, CHILDREN), ("woman",)),
)


def panel_frames(panel: Panel, root: Path, seconds: float, height: int, frozen: bool = False) -> Iterator[np.ndarray]:
    """The panel's frames at FPS, cropped and scaled to `height` (all equal to the first when frozen)."""
    import cv2

    src = iter_frames(root / panel.clip, start_s=panel.start_s, end_s=panel.start_s + seconds)
    first = None
    for img in constant_rate(src, panel.start_s, panel.start_s + seconds, FPS):
        if panel.crop:
            x1, y1, x2, y2 = panel.crop
            img = img[y1:y2, x1:x2]
        h, w = img.shape[:2]
        img = cv2.resize(img, (int(round(w * height / h)) // 2 * 2, height), interpolation=cv2.INTER_AREA)
        first = img if first is None else first
        yield first if frozen else img


def build_scene(scene: Scene, root: Path, dst: Path, seconds: float = 4.0, height: int = 260, loops: int = 1) -> Path:
    """Write the composite mp4 (FPS, 16 kHz mono sound) and return its path. With `loops` > 1 the scene plays
    that many times in a row, sound and picture together (a longer clip from the 5 s talking head)."""

    def frames():
        for _ in range(loops):
            columns = [panel_frames(p, root, seconds, height, p.name in scene.frozen) for p in scene.panels]
            yield from (np.concatenate(row, axis=1) for row in zip(*columns))

    audio = np.tile(scene_audio(scene, root, seconds), loops)
    return write_video(dst, frames(), FPS, audio=audio, audio_rate=SAMPLE_RATE)


def panel_of(x_centre: float, scene: Scene, root: Path, height: int = 260) -> str:
    """Which panel a face centre (composite pixels) lies in."""
    edges = np.cumsum([panel_width(p, root, height) for p in scene.panels])
    return scene.panels[min(int(np.searchsorted(edges, x_centre, side="right")), len(edges) - 1)].name


def face_truth(x_centre: float, scene: Scene, root: Path, height: int = 260) -> tuple[str, bool]:
    """(label, speaks) of a face centred at x_centre: its panel's truth, except that a bystander in a panel
    (the braiding girl at the woman's crop edge) is labelled `<panel>-bystander` and never speaks."""
    widths = [panel_width(p, root, height) for p in scene.panels]
    edges = np.cumsum(widths)
    k = min(int(np.searchsorted(edges, x_centre, side="right")), len(edges) - 1)
    panel = scene.panels[k]
    if panel.bystander_from is not None and x_centre - (edges[k] - widths[k]) > panel.bystander_from * widths[k]:
        return f"{panel.name}-bystander", False
    return panel.name, panel.name in scene.speaking()


def panel_width(panel: Panel, root: Path, height: int) -> int:
    if panel.crop:
        w, h = panel.crop[2] - panel.crop[0], panel.crop[3] - panel.crop[1]
    else:
        img = next(iter_frames(root / panel.clip)).image
        h, w = img.shape[:2]
    return int(round(w * height / h)) // 2 * 2


def scenes_named(names: Sequence[str]) -> list[Scene]:
    return [s for s in SCENES if s.name in names]


def scene_audio(scene: Scene, root: Path, seconds: float) -> np.ndarray:
    """The scene's soundtrack at 16 kHz: the chosen panels' own voices, each peak-normalised, mixed."""
    n = int(round(seconds * SAMPLE_RATE))
    audio = np.zeros(n, np.float32)
    for p in scene.panels:
        if p.name in scene.voices:
            a = load_audio(root / p.clip, start_s=p.start_s, end_s=p.start_s + seconds)[:n]
            audio[: len(a)] += a / max(1e-6, float(np.abs(a).max())) * 0.5
    return audio


def panel_crops(scene: Scene, root: Path, seconds: float, size: int = 224) -> dict[str, list[np.ndarray]]:
    """Each single-face panel as a fixed face crop (size x size), for tests that skip L1: the panels of
    MAN and WOMAN are squares around one face, as L1's crop clips are."""
    import cv2

    return {p.name: [cv2.resize(img, (size, size), interpolation=cv2.INTER_AREA)
                     for img in panel_frames(p, root, seconds, size, p.name in scene.frozen)]
            for p in scene.panels if p.faces == 1}
