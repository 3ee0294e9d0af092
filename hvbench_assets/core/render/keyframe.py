"""One still per clip for the UI: the frame showing the most tracks, with their stored face and body boxes,
each face labelled with its person number and track id ("P1 t3"), so a person reads the same on every page.
"P1", not a bare "1": two numbers side by side ("1 t3") leave open which one is the person.

A question's still draws the same numbers (the ones on its video's boxes) and track ids, its target in red."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

import cv2
import numpy as np

from hvbench_assets.core.media import iter_frames
from hvbench_assets.core.render.marked import HIGHLIGHT_BGR, NUMBER_BGR, draw_box, draw_boxes
from hvbench_assets.core.vision.tables import Track, boxes_by_frame, number_tracks

BODY_BGR = (200, 200, 200)


def key_frame_index(tracks: list[Track]) -> int | None:
    """The frame with the most tracked faces; among those, the one nearest the middle of that run of frames."""
    faces = boxes_by_frame(tracks)
    if not faces:
        return None
    most = max(len(b) for b in faces.values())
    best = sorted(f for f, b in faces.items() if len(b) == most)
    return best[len(best) // 2]


def person_label(number: int | None, track_id: int) -> str:
    """How a still names a person: person number and track id."""
    return f"P{number} t{track_id}" if number is not None else f"t{track_id}"


def frame_people(tracks: list[Track], frame: int, numbers: Mapping[int, int] | None = None) -> list[str]:
    """The names a still of `frame` draws on its faces ("P1 t3"), in number order: for the UI's metadata."""
    numbers = number_tracks(tracks) if numbers is None else numbers
    on = boxes_by_frame(tracks).get(frame, {})
    order = sorted(on, key=lambda t: (t not in numbers, numbers.get(t, 0), t))
    return [person_label(numbers.get(t), t) for t in order]


def render_key_frame(clip: str | Path, tracks: list[Track], dst: str | Path, max_side: int = 640,
                     quality: int = 80, kept: tuple[int, np.ndarray, float] | None = None,
                     numbers: Mapping[int, int] | None = None,
                     highlight: Collection[int] = ()) -> tuple[Path, int] | None:
    """Write the key frame as JPEG (longest side `max_side`); None when there are no tracks. `kept` is a
    frame L1 held from its own pass (index, image, image pixels -> source pixels): it is used when it
    shows as many stored faces as the best frame, so drawing the still costs no second decode. `numbers`
    (default: `number_tracks`, the clip's person numbers) label the faces; `highlight` tracks are drawn in red."""
    faces = boxes_by_frame(tracks)
    frame = key_frame_index(tracks)
    if frame is None:
        return None
    to_img = 1.0
    if kept is not None and len(faces.get(kept[0], {})) == len(faces[frame]):
        frame, image, to_src = kept
        to_img = 1 / to_src
    else:
        t = next(b.t for tr in tracks for b in tr.boxes if b.frame == frame)
        image = next((fr.image for fr in iter_frames(clip, start_s=max(0.0, t - 0.5), end_s=t + 0.5)
                      if fr.index == frame), None)
    if image is None:
        return None
    img = image.copy()
    scale = max(img.shape[:2]) / 720
    numbers = number_tracks(tracks) if numbers is None else numbers
    bodies = boxes_by_frame(tracks, "body").get(frame, {})
    for tid, box in bodies.items():
        draw_box(img, _scaled(box, to_img), BODY_BGR, scale * 0.5)
    draw_boxes(img, [(_scaled(box, to_img), HIGHLIGHT_BGR if tid in highlight else NUMBER_BGR,
                      person_label(numbers.get(tid), tid)) for tid, box in faces[frame].items()], scale)
    k = max_side / max(img.shape[:2])
    if k < 1:
        img = cv2.resize(img, None, fx=k, fy=k, interpolation=cv2.INTER_AREA)
    dst = Path(dst)
    if not cv2.imwrite(str(dst), img, [cv2.IMWRITE_JPEG_QUALITY, quality]):
        raise OSError(f"{dst}: could not write the key frame")
    return dst, frame


def _scaled(box, k: float):
    return box if k == 1.0 else tuple(v * k for v in box)
