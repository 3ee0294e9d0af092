"""Clips whose faces are not real people, generated for the "real human" verdict (tests, benchmarks/real_humans.py).

Every clip is rebuilt from a seed and, for the derived kinds, from ../shared/videos; nothing is stored as media.

- drawn: an OpenCV-drawn cartoon face (flat fills, black outlines, big eyes) that bobs, blinks and talks.
- toon: a shared clip turned into a cartoon (smoothed, colours quantised, dark edge lines): real motion.
- print: one frame of a shared clip printed on a white card that moves rigidly over a backdrop.
- screen: a shared clip playing on a TV set inside the scene (bezel, colour cast, scan lines).
- statue: a face frame turned to tinted stone (grey, smooth, no colour) that turns slowly, lit from the side.
- real: a shared clip, as it is or re-encoded (smaller, harder compression, brighter, mirrored).

`KINDS` says which are persons: only `real`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from hvbench_assets.core.media import iter_frames, probe_video, write_video

W, H, FPS = 640, 360, 25.0
KINDS = {"real": True, "drawn": False, "toon": False, "print": False, "screen": False, "statue": False}
DRAWN_SEED = 0  # a drawn face YuNet finds on every frame (tests)
SOURCES = ("man_talking_head.mp4", "two_children.mp4", "two_people_talking.mp4", "five_people_grid.mp4")


@dataclass(frozen=True)
class Item:
    name: str
    kind: str  # a key of KINDS
    path: Path
    source: str  # the shared clip it was made from ("" for drawn faces): the group of a cross-validation split

    @property
    def human(self) -> bool:
        return KINDS[self.kind]


def _colour(rng: np.random.Generator, lo: int, hi: int) -> tuple[int, int, int]:
    return tuple(int(v) for v in rng.integers(lo, hi, 3))


def _cartoon_frame(rng_seed: int, t: float) -> np.ndarray:
    """Frame at time t of drawn face `rng_seed`: the style is fixed by the seed, the pose moves with t."""
    rng = np.random.default_rng(rng_seed)
    bg = _colour(rng, 90, 250)
    skin = _colour(rng, 110, 245)
    hair = _colour(rng, 0, 140)
    line = int(rng.integers(2, 5))
    r = int(rng.integers(55, 100))
    eye = rng.uniform(0.16, 0.3)
    cx0, cy0 = int(rng.integers(220, 420)), int(rng.integers(160, 200))
    img = np.full((H, W, 3), bg, np.uint8)
    if rng.random() < 0.5:  # a simple drawn room: floor and a window
        cv2.rectangle(img, (0, int(H * 0.75)), (W, H), _colour(rng, 60, 200), -1)
        cv2.rectangle(img, (30, 40), (150, 150), (235, 220, 170), -1)
        cv2.rectangle(img, (30, 40), (150, 150), (20, 20, 20), line)
    cx = int(cx0 + 25 * np.sin(t * 1.3 + rng_seed))
    cy = int(cy0 + 6 * np.sin(t * 2.1))
    # body
    cv2.ellipse(img, (cx, cy + int(r * 2.3)), (int(r * 1.3), int(r * 1.1)), 0, 180, 360, _colour(rng, 20, 230), -1,
                cv2.LINE_AA)
    cv2.ellipse(img, (cx, cy), (r, int(r * 1.2)), 0, 0, 360, skin, -1, cv2.LINE_AA)
    cv2.ellipse(img, (cx, cy), (r, int(r * 1.2)), 0, 0, 360, (20, 20, 20), line, cv2.LINE_AA)
    cv2.ellipse(img, (cx, cy - int(r * 0.85)), (int(r * 1.05), int(r * 0.5)), 0, 180, 360, hair, -1, cv2.LINE_AA)
    blink = (t * 1.7 + rng_seed) % 3.0 < 0.15
    er, ey, dx = int(r * eye), cy - int(r * 0.2), int(r * 0.42)
    for sx in (-1, 1):
        ex = cx + sx * dx
        if blink:
            cv2.line(img, (ex - er, ey), (ex + er, ey), (20, 20, 20), line + 1, cv2.LINE_AA)
        else:
            cv2.ellipse(img, (ex, ey), (er, int(er * 1.2)), 0, 0, 360, (255, 255, 255), -1, cv2.LINE_AA)
            cv2.ellipse(img, (ex, ey), (er, int(er * 1.2)), 0, 0, 360, (20, 20, 20), line, cv2.LINE_AA)
            look = int(er * 0.3 * np.sin(t))
            cv2.circle(img, (ex + look, ey + 2), max(3, int(er * 0.55)), (40, 30, 20), -1, cv2.LINE_AA)
            cv2.circle(img, (ex + look - 2, ey - 2), max(1, er // 6), (255, 255, 255), -1, cv2.LINE_AA)
        cv2.line(img, (ex - er, ey - int(er * 1.6)), (ex + er, ey - int(er * 1.8)), (20, 20, 20), line + 1, cv2.LINE_AA)
    cv2.line(img, (cx, cy + 2), (cx - 7, cy + int(r * 0.3)), (40, 40, 40), line, cv2.LINE_AA)
    mouth = abs(np.sin(t * 9.0)) * r * 0.18  # talking
    lips = ((cx, cy + int(r * 0.6)), (int(r * 0.35), int(2 + mouth)))
    cv2.ellipse(img, *lips, 0, 0, 360, (40, 30, 110), -1, cv2.LINE_AA)
    cv2.ellipse(img, *lips, 0, 0, 360, (20, 20, 20), line, cv2.LINE_AA)
    return img


def drawn_clip(dst: Path, seed: int, seconds: float = 4.0) -> Path:
    n = int(seconds * FPS)
    return write_video(dst, (_cartoon_frame(seed, i / FPS) for i in range(n)), fps=FPS)


def _fit(img: np.ndarray, w: int = W, h: int = H) -> np.ndarray:
    """`img` scaled to fit w x h and centred on black."""
    k = min(w / img.shape[1], h / img.shape[0])
    size = (max(1, int(img.shape[1] * k)), max(1, int(img.shape[0] * k)))
    small = cv2.resize(img, size, interpolation=cv2.INTER_AREA)
    out = np.zeros((h, w, 3), np.uint8)
    y, x = (h - small.shape[0]) // 2, (w - small.shape[1]) // 2
    out[y:y + small.shape[0], x:x + small.shape[1]] = small
    return out


def _frames(src: Path, seconds: float | None) -> Iterator[np.ndarray]:
    for fr in iter_frames(src, end_s=seconds):
        yield fr.image


def cartoonize(img: np.ndarray, levels: int = 6, passes: int = 4) -> np.ndarray:
    """Photo -> cartoon: repeated edge-preserving smoothing, colours quantised to `levels` per channel,
    and dark lines where the grey image has edges."""
    small = img
    for _ in range(passes):
        small = cv2.bilateralFilter(small, 9, 40, 7)
    step = 256 // levels
    flat = (small // step) * step + step // 2
    grey = cv2.medianBlur(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), 5)
    edges = cv2.adaptiveThreshold(grey, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, 9, 4)
    return cv2.bitwise_and(flat.astype(np.uint8), flat.astype(np.uint8), mask=edges)


def toon_clip(dst: Path, src: Path, levels: int = 6, seconds: float = 4.0) -> Path:
    fps = probe_video(src, count_frames=False).fps
    return write_video(dst, (cartoonize(f, levels) for f in _frames(src, seconds)), fps=fps)


def _backdrop(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = np.zeros((H, W, 3), np.float32)
    base[:] = _colour(rng, 60, 200)
    ramp = np.linspace(0.7, 1.2, W, dtype=np.float32)[None, :, None]
    noise = rng.normal(0, 6, (H // 8, W // 8, 3)).astype(np.float32)
    return np.clip(base * ramp + cv2.resize(noise, (W, H)), 0, 255).astype(np.uint8)


def _first_frame(src: Path, at_s: float = 1.0) -> np.ndarray:
    for fr in iter_frames(src, start_s=at_s):
        return fr.image
    raise ValueError(f"{src}: no frame at {at_s}s")


def print_clip(dst: Path, src: Path, seed: int, seconds: float = 4.0) -> Path:
    """A photo (one frame of `src`) on a white card held up and moved rigidly: shift, tilt, zoom."""
    photo = _first_frame(src)
    k = 300 / max(photo.shape[:2])
    photo = cv2.resize(photo, None, fx=k, fy=k, interpolation=cv2.INTER_AREA)
    card = cv2.copyMakeBorder(photo, 14, 40, 14, 14, cv2.BORDER_CONSTANT, value=(245, 245, 240))
    ch, cw = card.shape[:2]
    bg = _backdrop(seed)
    rng = np.random.default_rng(seed)
    phase = rng.uniform(0, 6)

    def frame(i: int) -> np.ndarray:
        t = i / FPS
        angle = 6 * np.sin(t * 1.1 + phase)
        zoom = 0.95 + 0.08 * np.sin(t * 0.7)
        cx, cy = W / 2 + 60 * np.sin(t * 0.9 + phase), H / 2 + 15 * np.sin(t * 1.7)
        m = cv2.getRotationMatrix2D((cw / 2, ch / 2), angle, zoom)
        m[:, 2] += (cx - cw / 2, cy - ch / 2)
        warped = cv2.warpAffine(card, m, (W, H), flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0))
        mask = cv2.warpAffine(np.full((ch, cw), 255, np.uint8), m, (W, H)) > 0
        out = bg.copy()
        out[mask] = warped[mask]
        light = 1.0 + 0.05 * np.sin(t * 2.3)  # room light flickers on card and wall alike
        return np.clip(out * light, 0, 255).astype(np.uint8)

    return write_video(dst, (frame(i) for i in range(int(seconds * FPS))), fps=FPS)


def screen_clip(dst: Path, src: Path, seed: int, seconds: float = 4.0) -> Path:
    """`src` playing on a TV in a room: shrunk into a bezel, blue cast, lifted blacks, scan lines."""
    rng = np.random.default_rng(seed)
    bg = _backdrop(seed)
    width = int(rng.integers(300, 380))
    x0, y0 = int(rng.integers(40, W - width - 40)), 40
    lines = (np.arange(H) % 3 == 0)[:, None, None]
    cast = np.array([1.08, 1.0, 0.88], np.float32)

    def frame(img: np.ndarray) -> np.ndarray:
        k = min(width / img.shape[1], (H - 2 * y0) / img.shape[0])
        sw, sh = int(img.shape[1] * k), int(img.shape[0] * k)
        scr = cv2.resize(img, (sw, sh), interpolation=cv2.INTER_AREA).astype(np.float32)
        scr = np.clip((scr * 0.85 + 25) * cast, 0, 255)
        out = bg.copy()
        cv2.rectangle(out, (x0 - 16, y0 - 16), (x0 + sw + 16, y0 + sh + 16), (25, 25, 28), -1)
        out[y0:y0 + sh, x0:x0 + sw] = scr.astype(np.uint8)
        region = out[y0:y0 + sh, x0:x0 + sw].astype(np.float32)
        region[lines[y0:y0 + sh, 0, 0]] *= 0.82
        out[y0:y0 + sh, x0:x0 + sw] = region.astype(np.uint8)
        return out

    fps = probe_video(src, count_frames=False).fps
    return write_video(dst, (frame(f) for f in _frames(src, seconds)), fps=fps)


def statue_clip(dst: Path, src: Path, seed: int, seconds: float = 4.0) -> Path:
    """One frame of `src` turned to stone (grey, smoothed, tinted) turning slowly under a moving light."""
    rng = np.random.default_rng(seed)
    photo = _fit(_first_frame(src, 0.5))
    grey = cv2.cvtColor(photo, cv2.COLOR_BGR2GRAY)
    grey = cv2.bilateralFilter(cv2.GaussianBlur(grey, (3, 3), 0), 9, 30, 9).astype(np.float32)
    tint = np.array(_colour(rng, 150, 230), np.float32) / 220.0
    stone = np.clip(grey[..., None] * tint[None, None, :], 0, 255)
    xs = np.linspace(-1, 1, W, dtype=np.float32)[None, :, None]

    def frame(i: int) -> np.ndarray:
        t = i / FPS
        lit = stone * (0.9 + 0.2 * xs * np.sin(t * 0.8))
        m = cv2.getRotationMatrix2D((W / 2, H / 2), 2 * np.sin(t * 0.6), 1.0 + 0.03 * np.sin(t * 0.5))
        return cv2.warpAffine(np.clip(lit, 0, 255).astype(np.uint8), m, (W, H), borderMode=cv2.BORDER_REFLECT)

    return write_video(dst, (frame(i) for i in range(int(seconds * FPS))), fps=FPS)


def real_variant(dst: Path, src: Path, variant: str, seconds: float | None = None) -> Path:
    """`src` (whole, or its first `seconds`) as it is (`plain`), shrunk (`small`), hard-compressed (`crf`),
    brighter (`bright`) or mirrored."""
    fps = probe_video(src, count_frames=False).fps

    def edit(img: np.ndarray) -> np.ndarray:
        if variant == "small":
            return cv2.resize(img, None, fx=0.6, fy=0.6, interpolation=cv2.INTER_AREA)
        if variant == "bright":
            return cv2.convertScaleAbs(img, alpha=1.15, beta=20)
        if variant == "mirror":
            return img[:, ::-1].copy()
        return img

    frames = (edit(f) for f in _frames(src, seconds))
    return write_video(dst, frames, fps=fps, crf=36 if variant == "crf" else 20)


def labelled_items(videos: Path, out: Path, n_drawn: int = 12) -> list[Item]:
    """The labelled clips: real ones and every non-human kind, written into `out` (reused when present)."""
    out.mkdir(parents=True, exist_ok=True)
    items: list[Item] = []

    def add(name: str, kind: str, source: str, make) -> None:
        path = out / f"{name}.mp4"
        if not path.exists():
            make(path)
        items.append(Item(name, kind, path, source))

    for i, src in enumerate(SOURCES):
        s = videos / src
        stem = src[:-4]
        for variant in ("plain", "small", "crf", "bright", "mirror"):
            add(f"real_{stem}_{variant}", "real", src, lambda p, s=s, v=variant: real_variant(p, s, v))
        add(f"toon_{stem}", "toon", src, lambda p, s=s, i=i: toon_clip(p, s, levels=4 + i % 4))
        add(f"print_{stem}", "print", src, lambda p, s=s, i=i: print_clip(p, s, seed=i))
        add(f"screen_{stem}", "screen", src, lambda p, s=s, i=i: screen_clip(p, s, seed=i))
        add(f"statue_{stem}", "statue", src, lambda p, s=s, i=i: statue_clip(p, s, seed=i))
    for seed in range(n_drawn):
        add(f"drawn_{seed:02d}", "drawn", "", lambda p, seed=seed: drawn_clip(p, seed))
    return items
