"""What is known about each face of every clip in ../shared/videos (both folders), for benchmarks and tests.

Truth per clip panel (left -> right): the speakers set's truth.json, and for the top folder its README
(two_people_talking two young women, two_children two little girls, man_talking_head a man; five_people_grid
shows those three clips side by side). `source` names the filmed person's source clip, so figures can be held
out per source: the man of man_talking_head is the speakers set's `vr_face2`. Panel edges are found in the
pictures (the seams between side-by-side panels), not written down.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from hvbench_assets.core.media import iter_frames

TOP = {"two_people_talking": ("female", "adult", "two_people_talking"),
       "two_children": ("female", "child", "two_children"),
       "man_talking_head": ("male", "adult", "vr_face2")}
GRID = ("two_people_talking", "two_children", "man_talking_head")  # five_people_grid's panels


@dataclass(frozen=True)
class Person:
    real: bool
    gender: str | None  # male | female; None when not a real person
    age: str | None  # adult | child
    source: str  # the filmed (or drawn) person's source clip
    panel: int


def clips(videos: Path) -> list[Path]:
    """Every clip with known truth: the top folder's, then the speakers set's."""
    top = [videos / f"{n}.mp4" for n in (*GRID, "five_people_grid")]
    speakers = sorted((videos / "speakers").glob("*.mp4")) if (videos / "speakers").is_dir() else []
    return [p for p in top if p.exists()] + speakers


@lru_cache(maxsize=2)
def _speakers_truth(folder: str) -> dict:
    return json.loads((Path(folder) / "truth.json").read_text())


def panels(path: Path) -> list[Person]:
    stem = path.stem
    if stem == "five_people_grid":
        return [Person(True, *TOP[n][:2], TOP[n][2], i) for i, n in enumerate(GRID)]
    if stem in TOP:
        return [Person(True, *TOP[stem][:2], TOP[stem][2], 0)]
    out = []
    for i, p in enumerate(_speakers_truth(str(path.parent))[stem]["panels"]):
        real = p["gender"] in ("male", "female")
        out.append(Person(real, p["gender"] if real else None, p["age"] if real else None, p["source"], i))
    return out


@lru_cache(maxsize=32)
def panel_edges(path: Path, n_panels: int, n_frames: int = 8) -> tuple[int, ...]:
    """x of the n-1 seams: columns whose step to the next column is large on every sampled frame."""
    if n_panels <= 1:
        return ()
    steps = []
    for fr in iter_frames(path):
        if fr.index % 10 == 0:
            g = cv2.cvtColor(fr.image, cv2.COLOR_BGR2GRAY).astype(np.float32)
            steps.append(np.abs(np.diff(g, axis=1)).mean(0))
        if len(steps) >= n_frames:
            break
    score = np.min(steps, axis=0)  # a seam is there on every frame; an edge inside a picture moves
    width = score.size + 1
    edges: list[int] = []
    for x in np.argsort(score)[::-1]:
        if all(abs(int(x) - e) > width // 10 for e in edges) and width // 10 < x < width - width // 10:
            edges.append(int(x) + 1)
        if len(edges) == n_panels - 1:
            break
    return tuple(sorted(edges))


def person_at(path: Path, x_centre: float) -> Person:
    """Who is at x (source pixels) of `path`: the panel's person."""
    people = panels(path)
    edges = panel_edges(path, len(people))
    return people[sum(x_centre >= e for e in edges)]
