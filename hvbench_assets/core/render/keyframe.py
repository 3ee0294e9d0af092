"""One still per clip for the UI: the frame showing the most tracks, with their stored face and body boxes,
each face labelled with its person number and track id ("P1 t3"), so a person reads the same on every page.
"P1", not a bare "1": two numbers side by side ("1 t3") leave open which one is the person.

A question's still draws the same numbers (the ones on its video's boxes) and track ids, its target in red."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import NamedTuple

import cv2
import numpy as np

from hvbench_assets.core.media import iter_frames
from hvbench_assets.core.render.inline import thumbnail
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


class Still(NamedTuple):
    path: Path  # the still (JPEG)
    frame: int  # its frame index in the clip
    thumbnail: Path | None = None  # the small copy for the UI's first screen (core/render/inline.py), when asked


def render_key_frame(clip: str | Path, tracks: list[Track], dst: str | Path, max_side: int = 640,
                     quality: int = 80, kept: tuple[int, np.ndarray, float] | None = None,
                     numbers: Mapping[int, int] | None = None,
                     highlight: Collection[int] = (), thumbnail_bytes: int | None = None) -> Still | None:
    """Write the key frame as JPEG (longest side `max_side`); None when there are no tracks. `kept` is a
    frame L1 held from its own pass (index, image, image pixels -> source pixels): it is used when it
    shows as many stored faces as the best frame, so drawing the still costs no second decode. `numbers`
    (default: `number_tracks`, the clip's person numbers) label the faces; `highlight` tracks are drawn in red.
    With `thumbnail_bytes`, a thumbnail of at most that many bytes is written beside it (`<name>-small.avif`),
    its face boxes drawn at its own scale and named by person number alone (`P1`: a track id would not fit), no body
    boxes (their edges cost the bytes that make the faces recognisable)."""
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
    numbers = number_tracks(tracks) if numbers is None else numbers
    bodies = boxes_by_frame(tracks, "body").get(frame, {})

    def draw(k: float, name) -> np.ndarray:  # the frame scaled by k, its boxes and tags drawn at that scale
        img = image.copy() if k == 1.0 else cv2.resize(image, None, fx=k, fy=k, interpolation=cv2.INTER_AREA)
        scale = max(img.shape[:2]) / 720 if k == 1.0 else 0.45  # a thumbnail's tags: as small as stay legible
        for box in bodies.values() if k == 1.0 else ():  # a thumbnail's bytes go to the faces
            draw_box(img, _scaled(box, to_img * k), BODY_BGR, scale * 0.5)
        draw_boxes(img, [(_scaled(box, to_img * k), HIGHLIGHT_BGR if tid in highlight else NUMBER_BGR,
                          name(numbers.get(tid), tid)) for tid, box in faces[frame].items()], scale)
        return img

    img = draw(1.0, person_label)
    k = max_side / max(img.shape[:2])
    if k < 1:
        img = cv2.resize(img, None, fx=k, fy=k, interpolation=cv2.INTER_AREA)
    dst = Path(dst)
    if not cv2.imwrite(str(dst), img, [cv2.IMWRITE_JPEG_QUALITY, quality]):
        raise OSError(f"{dst}: could not write the key frame")
    small = None
    if thumbnail_bytes:
        fitted = thumbnail(lambda width: draw(width / image.shape[1], short_label), thumbnail_bytes)
        if fitted is not None:
            small = dst.with_name(f"{dst.stem}-small{fitted[1]}")
            small.write_bytes(fitted[0])
    return Still(dst, frame, small)


def short_label(number: int | None, track_id: int) -> str:
    """How a thumbnail names a person: the number alone (the track where there is none)."""
    return f"P{number}" if number is not None else f"t{track_id}"


def _scaled(box, k: float):
    return box if k == 1.0 else tuple(v * k for v in box)
