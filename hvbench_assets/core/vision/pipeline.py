"""L1 in one decode pass: detect faces every k-th frame, link them into tracks, interpolate boxes for the
frames in between, attach body boxes, and write each track's face and body crop clips as frames stream by.

With the default offline detector (YuNet) each detection frame gets one pass at `detect_max_side`; the larger
fine pass and the second looks below serve dlib HOG, which misses faces under ~80 px and turned heads.
With a `backend.rescue` detector, a detection frame gets a second look where the first pass is blind:
around every live track it did not find (enlarged, rotated: tilted heads, faces too small for the
640 px pass) and, `rescue_fps` times a second, over the whole frame (new tilted faces).

Only the frames between a live track's last detection and the current frame are held in memory (at most
`max_gap_s` plus one detection step, scaled to `buffer_max_side`), never the whole clip.
"""

from __future__ import annotations

import shutil
import statistics
import time
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np

from hvbench_assets.core.media import iter_frames, probe_video, source_audio
from hvbench_assets.core.media.encode import AUDIO_RATE
from hvbench_assets.core.media.crops import CropClipWriter, crop_to
from hvbench_assets.core.vision.backends import VisionBackend
from hvbench_assets.core.vision.body import contains_face, estimate_body, fill_missing, match_body
from hvbench_assets.core.vision.boxes import clip, lerp, overlaps, scale, size, square_around
from hvbench_assets.core.vision.tables import Box
from hvbench_assets.core.vision.tracker import (
    Detection,
    IouTracker,
    LiveTrack,
    shift,
    size_ratio,
)


@dataclass(frozen=True)
class TrackingParams:
    detect_fps: float = 6.0  # face detections per second of video (every k-th frame)
    person_fps: float = 2.0  # person detections per second (on face-detection frames; 0: none), with
    # backend.person; between them the last matched box follows the face (filled). Boxes as good as at
    # 6/s on the labelled frames at a third of the detector's cost (benchmarks/body_boxes.py --tracks)
    detect_max_side: int | None = None  # detector input size on most detection frames (None: the backend's own)
    quick_max_side: int | None = None  # a smaller input between full-size passes (None: the backend's; 0: off) ...
    quick_min_face_px: float = 36.0  # ... only while every live face is at least this wide in it, and redone at
    # detect_max_side when it misses a face seen on the previous detection frame; a full-size pass every
    # fine_every_s finds new small faces
    fine_max_side: int = 1280  # larger input for faces too small at detect_max_side ...
    fine_every_s: float = 1.0  # ... used on one detection frame per this many seconds
    fine_enlarge: float = 1.0  # > 1: the fine pass may also enlarge (up to fine_max_side) for faces
    # below HOG's ~80 px window; e.g. 2.0 with fine_max_side=2560 finds 40 px faces in 1280 px frames at
    # about 4x the fine pass's cost (off by default: no gain on the shared clips)
    buffer_max_side: int = 1280  # frames held for crops are shrunk to this
    rescue_fps: float = 2.0  # whole-frame second look (backend.rescue: rotated, enlarged) per second ...
    rescue_zoom: float = 1.5  # ... on the detect_max_side image enlarged by this factor ...
    rescue_max_side: int = 720  # ... but to no more than this size (no enlarging below x1.25)
    rescue_face_px: int = 100  # around a live track the first pass lost: its last face scaled to this
    iou_threshold: float = 0.5  # the paper's overlap rule
    max_gap_s: float = 2.5  # a track survives this long without a detection (boxes interpolated) ...
    verify_gap_s: float = 0.5  # ... but links across gaps longer than this need a matching face descriptor
    same_face_distance: float = 0.6  # dlib's threshold for one descriptor against a track's mean
    min_track_s: float = 0.5  # shorter tracks are dropped
    min_detections: int = 3
    face_crop: int = 224
    face_margin: float = 0.25  # face crop side = (1 + 2 * margin) * face size
    body_crop: tuple[int, int] = (256, 384)  # w, h
    body_clips: bool = True  # write body-crop clips (only L4's MLLM reads them; 2/3 of the crop encoding cost)
    crop_smoothing: float = 0.35  # per-frame weight of the new box in the crop window (1 = no smoothing)
    embed_every_s: float = 1.5
    embed_first_every_s: float = 0.5  # the first `embed_first` descriptors come faster: short tracks need
    embed_first: int = 3  # several to merge reliably in L2 (one descriptor of a tilted face is noisy)
    max_embeddings: int = 6
    min_embed_face_px: int = 24  # dlib's descriptors of 24-40 px faces still separate people about as well
    # as at 80 px on the shared clips; without them tracks of small faces could never merge in L2

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class TrackingResult:
    tracks: list[dict]  # human_tracks rows
    boxes: list[dict]  # human_track_boxes rows
    frame_count: int
    fps: float
    frames_with_face: int
    video_decodes: int = 1
    faceless_bodies: int | None = None  # person boxes holding no detected face on a typical person-detection
    # frame (median; e.g. a torso whose head is out of view); None when no person detector ran
    timings: dict[str, float] = field(default_factory=dict)
    # the detection frame that linked the most faces, kept from the pass so the UI's key frame needs no
    # second decode: (frame index, image at buffer size, buffer pixels -> source pixels)
    key_frame: tuple[int, np.ndarray, float] | None = None

    @property
    def face_presence(self) -> float:
        return self.frames_with_face / self.frame_count if self.frame_count else 0.0


class NoClip:
    """The body writer when body clips are off: takes nothing, writes nothing."""

    def __init__(self, dst: Path):
        self.dst = dst

    def push(self, image: np.ndarray) -> None:
        pass

    def close(self) -> None:
        return None

    def abort(self) -> None:
        pass


@dataclass
class _State:
    """A live track's writing side: what has been emitted and the crop writers."""

    track: LiveTrack
    face_writer: CropClipWriter
    body_writer: CropClipWriter | NoClip
    written: int  # last frame emitted
    last_body: tuple[Box, str, Box] | None = None  # body box, its source and the face at the last emitted detection
    rows: list[dict] = field(default_factory=list)
    embeddings: list[np.ndarray] = field(default_factory=list)
    face_view: Box | None = None  # smoothed crop windows (see _smooth)
    body_view: Box | None = None
    last_embed_t: float = -1e9


class _Clock:
    def __init__(self):
        self.t: dict[str, float] = Counter()

    def add(self, key: str, since: float) -> float:
        now = time.perf_counter()
        self.t[key] += now - since
        return now


def track_video(src: str | Path, out_dir: str | Path, backend: VisionBackend,
                params: TrackingParams = TrackingParams()) -> TrackingResult:
    """Track every face in `src`, write crop clips into `out_dir` (emptied first) and return table rows."""
    src, out_dir = Path(src), Path(out_dir)
    params = _resolved(params, backend)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    info = probe_video(src, count_frames=False)
    fps, width, height = info.fps, info.width, info.height
    audio = source_audio(src, rate=AUDIO_RATE) if info.has_audio else None
    step = max(1, round(fps / params.detect_fps))
    fine_every = max(1, round(params.fine_every_s * fps / step))
    rescue_every = max(1, round(fps / step / params.rescue_fps)) if params.rescue_fps > 0 else 10**9
    person_every = max(1, round(fps / step / params.person_fps)) if params.person_fps > 0 else 10**9
    faceless: list[int] = []  # per person-detection frame: person boxes holding no detected face
    tracker = IouTracker(params.iou_threshold, max_gap=round(params.max_gap_s * fps))
    clock = _Clock()
    states: dict[int, _State] = {}
    finished: list[_State] = []
    buffer: dict[int, np.ndarray] = {}
    times: dict[int, float] = {}
    to_src = 1.0  # buffer pixels -> source pixels
    key_frame = None

    def audio_span(st: _State):
        if audio is None:
            return None
        return lambda: audio[int(st.track.first / fps * AUDIO_RATE): int((st.track.last + 1) / fps * AUDIO_RATE)]

    def open_state(track: LiveTrack, frame: int) -> _State:
        st = _State(track, None, None, written=frame - 1)  # type: ignore[arg-type]
        span = audio_span(st)
        st.face_writer = CropClipWriter(out_dir / f"live{track.key}_face.mp4", fps, span)
        st.body_writer = (CropClipWriter(out_dir / f"live{track.key}_body.mp4", fps, span) if params.body_clips
                          else NoClip(out_dir / f"live{track.key}_body.mp4"))
        return st

    def emit(st: _State, frame: int, det: Detection, prev: int | None, body: Box | None) -> None:
        """Write frames (st.written, frame] of a track that was just detected at `frame`."""
        t0 = time.perf_counter()
        prev_box = st.track.detections[prev].box if prev is not None else det.box
        cur_body, cur_src = _body_now(body, st.last_body, det.box, backend, width, height)
        first = st.written + 1
        gap_bodies: list[Box | None] = [st.last_body[0] if st.last_body else None] + [None] * (frame - first) + [cur_body]
        filled = fill_missing(gap_bodies) if backend.person is not None else None
        for f in range(first, frame + 1):
            w = 1.0 if prev is None or f == frame else (f - prev) / (frame - prev)
            face = det.box if f == frame else lerp(prev_box, det.box, w)
            if filled is not None:
                body_box = filled[f - first + 1] if f < frame else cur_body
                body_src = cur_src if f == frame else ("filled" if st.last_body else cur_src)
            else:
                body_box, body_src = estimate_body(face, width, height), "estimated"
            img = _frame(buffer, f)
            st.face_view = _smooth(st.face_view, square_around(face, params.face_margin), params.crop_smoothing)
            st.body_view = _smooth(st.body_view, body_box, params.crop_smoothing)
            st.face_writer.push(crop_to(img, scale(st.face_view, 1 / to_src), params.face_crop, params.face_crop))
            if params.body_clips:
                st.body_writer.push(crop_to(img, scale(st.body_view, 1 / to_src), *params.body_crop))
            st.rows.append({
                "frame": f, "t": times.get(f, f / fps), "face": face, "body": body_box,
                "face_source": "detected" if f == frame else "interpolated", "body_source": body_src,
                "score": det.score if f == frame else None,
                "detector": det.detector if f == frame else None,
            })
        st.written = frame
        st.last_body = (cur_body, cur_src, det.box)
        clock.add("crops", t0)

    def same_face(track: LiveTrack, det: Detection) -> bool:
        """Identity check for links across long gaps (reads `fr`, the frame being processed)."""
        st = states.get(track.key)
        if backend.embedder is None or st is None or not st.embeddings:
            return True  # nothing to compare with: position and size decide, as for short gaps
        vec = backend.embedder.embed(fr.image, scale(det.box, 1 / to_src))
        return vec is None or float(np.linalg.norm(vec - np.mean(st.embeddings, axis=0))) < params.same_face_distance

    verify_after = round(params.verify_gap_s * fps)
    n, last_detected = -1, -1
    t0 = time.perf_counter()
    try:
        for fr in iter_frames(src, max_side=params.buffer_max_side):
            n += 1
            if n == 0:
                to_src = width / fr.image.shape[1]
            buffer[fr.index] = fr.image
            times[fr.index] = fr.t
            t0 = clock.add("decode", t0)
            if n % step:
                continue
            fine = (n // step) % fine_every == 0
            whole = (n // step) % rescue_every == 0
            quick = None if fine else _quick(fr.image, backend, params, to_src, tracker.alive, last_detected)
            dets = (quick or _detect(fr.image, backend, params, to_src, fine, whole, tracker.alive))[0]
            last_detected = fr.index
            t0 = clock.add("detect", t0)
            # persons on the buffered frame: the face pass may have looked at a 320 px copy
            look = backend.person is not None and (n // step) % person_every == 0
            persons = [scale(b, to_src) for b in backend.person.detect(fr.image)] if look else []
            if look:
                faceless.append(sum(not any(contains_face(p, d.box) for d in dets) for p in persons))
            t0 = clock.add("persons", t0)
            linked = tracker.update(fr.index, dets, verify=same_face, verify_after=verify_after)
            if len(linked) > (len(key_frame[3]) if key_frame else 0):
                key_frame = (fr.index, fr.image, to_src, linked)
            for track, det, prev in linked:
                st = states.get(track.key) or states.setdefault(track.key, open_state(track, fr.index))
                body = None
                if look:
                    i = match_body(det.box, persons)
                    body = persons[i] if i is not None else None
                emit(st, fr.index, det, prev, body)
                if backend.embedder is not None:
                    t1 = time.perf_counter()
                    _maybe_embed(st, backend, fr.image, scale(det.box, 1 / to_src), fr.t, params)
                    clock.add("embed", t1)
            for track in tracker.expire(fr.index):
                finished.append(_close(states.pop(track.key)))
            keep_from = min((s.written for s in states.values()), default=fr.index) + 1
            for f in [f for f in buffer if f < keep_from]:
                del buffer[f], times[f]
            t0 = time.perf_counter()
    except BaseException:
        for st in list(states.values()) + finished:  # no half-written clips, no blocked encoder threads
            st.face_writer.abort()
            st.body_writer.abort()
        raise
    for track in tracker.expire(None):
        finished.append(_close(states.pop(track.key)))
    frame_count = n + 1
    t0 = time.perf_counter()
    result = _finalize(finished, out_dir, fps, frame_count, params)
    clock.add("finalize", t0)
    result.key_frame = key_frame[:3] if key_frame else None
    result.faceless_bodies = round(statistics.median(faceless)) if faceless else None
    result.timings = dict(clock.t)
    return result


def detect_faces(image: np.ndarray, backend: VisionBackend, params: TrackingParams = TrackingParams(),
                 fine: bool = False, whole: bool = False) -> list[Detection]:
    """The faces L1 finds on one frame (BGR, any size) without tracks to look around: the detection image
    of an ordinary detection frame, or with `fine` / `whole` the frames that also get the fine pass / the
    whole-frame second look. Boxes in `image` pixels (benchmarks/face_recall.py scores this)."""
    buffered, k = _shrink(image, params.buffer_max_side)
    return _detect(buffered, backend, _resolved(params, backend), 1 / k, fine, whole, [])[0]


def _resolved(params: TrackingParams, backend: VisionBackend) -> TrackingParams:
    """`params` with the backend's detection sizes filled in, so stored params say what ran."""
    if not params.detect_max_side:
        params = replace(params, detect_max_side=backend.detect_max_side)
    if params.quick_max_side is None:
        params = replace(params, quick_max_side=backend.quick_max_side)
    return params


def _quick(image: np.ndarray, backend: VisionBackend, params: TrackingParams, to_src: float,
           alive: list[LiveTrack], previous: int) -> tuple[list[Detection], np.ndarray, float] | None:
    """The first pass at `quick_max_side` instead of `detect_max_side`, when it can stand in for it: every
    live track's last face is at least `quick_min_face_px` wide at that size, and every track detected on
    the previous detection frame (`previous`) is found again. None: run the full-size pass."""
    side = params.quick_max_side
    if not side or side >= params.detect_max_side or not alive or backend.rescue is not None:
        return None
    small, k = _shrink(image, side)
    if any(size(t.last_box) / to_src * k < params.quick_min_face_px for t in alive):
        return None
    dets = [Detection(scale(d.box, to_src / k), d.score, "quick") for d in backend.face.detect(small)]
    if any(not any(shift(t.last_box, d.box) < 0.5 for d in dets) for t in alive if t.last == previous):
        return None
    return dets, small, k


def _detect(image: np.ndarray, backend: VisionBackend, params: TrackingParams, to_src: float, fine: bool,
            whole: bool, alive: list[LiveTrack]) -> tuple[list[Detection], np.ndarray, float]:
    """Faces on a buffered frame (source pixels = buffer pixels x `to_src`), and the detection image with
    its scale. `fine`: the larger pass for detectors that gain from it; `whole`: rescue over the whole
    frame (backend.rescue), besides the look around `alive` tracks it lost."""
    fine = fine and backend.fine_pass and params.fine_max_side > params.detect_max_side
    small, k = _shrink(image, params.fine_max_side if fine else params.detect_max_side)
    if fine and params.fine_enlarge > 1.0:
        z = min(params.fine_enlarge, params.fine_max_side / max(small.shape[:2]))
        if z > 1.0:
            small, k = cv2.resize(small, None, fx=z, fy=z, interpolation=cv2.INTER_LINEAR), k * z
    dets = [Detection(scale(d.box, to_src / k), d.score, "primary") for d in backend.face.detect(small)]
    if backend.rescue is not None:
        dets += _rescue(image, whole, dets, alive, backend.rescue, params, to_src)
    return dets, small, k


def _rescue(image: np.ndarray, whole: bool, dets: list[Detection],
            alive: list[LiveTrack], rescue, params: TrackingParams, to_src: float) -> list[Detection]:
    """Faces the first pass missed. (1) Around each live track without a nearby first-pass face: its last
    box enlarged to `rescue_face_px`, upright and rotated, best hit that the tracker would link. (2) When
    `whole`: the whole detection image enlarged (`rescue_zoom`, `rescue_max_side`) and rotated, for
    new small or tilted faces. Hits overlapping a first-pass face are dropped."""
    found: list[Detection] = []
    for tr in alive:
        last = tr.last_box
        if any(shift(last, d.box) < 1.0 for d in dets):
            continue
        view = scale(square_around(last, 1.0), 1 / to_src)  # buffer pixels, 3 face sizes wide
        x1, y1 = max(0, int(view[0])), max(0, int(view[1]))
        x2, y2 = min(image.shape[1], int(view[2])), min(image.shape[0], int(view[3]))
        if x2 - x1 < 8 or y2 - y1 < 8:
            continue
        z = params.rescue_face_px / max(size(last) / to_src, 1.0)
        roi = cv2.resize(image[y1:y2, x1:x2], None, fx=z, fy=z, interpolation=cv2.INTER_LINEAR if z > 1 else cv2.INTER_AREA)
        hits = [Detection(scale(_offset(scale(d.box, 1 / z), x1, y1), to_src), d.score, f"rescue:{d.detector}")
                for d in rescue.detect(roi)]
        hits = [d for d in hits if shift(last, d.box) < 0.5 and size_ratio(last, d.box) < 1.5]
        if hits:
            found.append(max(hits, key=lambda d: d.score))
    if whole:
        img, k = _shrink(image, params.detect_max_side)
        z = min(params.rescue_zoom, params.rescue_max_side / max(img.shape[:2]))
        z = z if z >= 1.25 else 1.0  # enlarge only small sources; big ones have the fine pass for small faces
        big = cv2.resize(img, None, fx=z, fy=z, interpolation=cv2.INTER_LINEAR) if z > 1 else img
        for d in rescue.detect(big, upright=z > 1):
            found.append(Detection(scale(d.box, to_src / (k * z)), d.score, f"rescue:{d.detector}"))
    kept: list[Detection] = []
    for d in found:
        if not any(overlaps(d.box, e.box) for e in dets + kept):
            kept.append(d)
    return kept


def _offset(b: Box, dx: float, dy: float) -> Box:
    return (b[0] + dx, b[1] + dy, b[2] + dx, b[3] + dy)


def _body_now(body: Box | None, last: tuple[Box, str, Box] | None, face: Box, backend: VisionBackend,
              width: int, height: int) -> tuple[Box, str]:
    """Body box at a detection frame: the matched person box; else the previous one moved as the face
    moved since (neighbour fill; person detection may run on fewer frames than face detection); else a
    face-geometry estimate (no person box seen yet, or no person detector at all)."""
    if body is not None:
        return body, "detected"
    if backend.person is not None and last is not None and last[1] != "estimated":
        dx, dy = (face[0] + face[2] - last[2][0] - last[2][2]) / 2, (face[1] + face[3] - last[2][1] - last[2][3]) / 2
        return clip(_offset(last[0], dx, dy), width, height), "filled"
    return estimate_body(face, width, height), "estimated"


def _track_body_source(rows: list[dict]) -> str:
    """`detected` when most of a track's body boxes come from the person detector (matched, or filled
    between its matches), else `estimated`."""
    estimated = sum(r["body_source"] == "estimated" for r in rows)
    return "estimated" if 2 * estimated >= len(rows) else "detected"


def body_clips(src: str | Path, boxes_by_track, out_dir: str | Path, fps: float,
               params: TrackingParams = TrackingParams()) -> dict[int, Path]:
    """Body-crop clips cut again from the source and the stored `human_track_boxes` rows ({track_id: rows}), with
    the smoothed window L1 uses, all in one decode of the clip's span: for L4 on a clip whose L1 ran without body
    clips (the one extra decode, paid only when appearance is described later than the tracks)."""
    windows: dict[int, dict[int, Box]] = {}
    for tid, rows in boxes_by_track.items():
        view, windows[tid] = None, {}
        for r in sorted(rows, key=lambda r: r["frame"]):
            view = _smooth(view, (r["body_x1"], r["body_y1"], r["body_x2"], r["body_y2"]), params.crop_smoothing)
            windows[tid][int(r["frame"])] = view
    windows = {tid: w for tid, w in windows.items() if w}
    if not windows:
        return {}
    out_dir = Path(out_dir)
    audio = source_audio(src)  # None without a sound track

    def span(w: dict[int, Box]):
        a, b = int(min(w) / fps * AUDIO_RATE), int((max(w) + 1) / fps * AUDIO_RATE)
        return None if audio is None else (lambda: audio[a:b])

    writers = {tid: CropClipWriter(out_dir / f"track{tid:02d}_body.mp4", fps, span(w)) for tid, w in windows.items()}
    first, last = min(min(w) for w in windows.values()), max(max(w) for w in windows.values())
    try:
        for fr in iter_frames(src, start_s=max(0.0, (first - 0.5) / fps), end_s=(last + 1) / fps):
            for tid, w in windows.items():
                if fr.index in w:
                    writers[tid].push(crop_to(fr.image, w[fr.index], *params.body_crop))
    except BaseException:
        for wr in writers.values():
            wr.abort()
        raise
    return {tid: wr.close() for tid, wr in writers.items()}


def _smooth(view: Box | None, box: Box, weight: float) -> Box:
    """Exponential smoothing of a crop window: detectors snap between scales every few frames, which
    would make the crop clip zoom in and out. Stored boxes stay unsmoothed."""
    return box if view is None else lerp(view, box, weight)


def _frame(buffer: dict[int, np.ndarray], f: int) -> np.ndarray:
    """The buffered frame, or the closest earlier one when the decoder skipped an index."""
    if f in buffer:
        return buffer[f]
    earlier = [i for i in buffer if i < f]
    return buffer[max(earlier)] if earlier else buffer[min(buffer)]


def _shrink(image: np.ndarray, max_side: int) -> tuple[np.ndarray, float]:
    h, w = image.shape[:2]
    k = min(1.0, max_side / max(h, w))
    if k >= 1.0:
        return image, 1.0
    return cv2.resize(image, (int(round(w * k)), int(round(h * k))), interpolation=cv2.INTER_AREA), k


def _maybe_embed(st: _State, backend: VisionBackend, image: np.ndarray, face: Box, t: float,
                 params: TrackingParams) -> None:
    every = params.embed_first_every_s if len(st.embeddings) < params.embed_first else params.embed_every_s
    if len(st.embeddings) >= params.max_embeddings or t - st.last_embed_t < every:
        return
    if size(face) < params.min_embed_face_px:
        return
    vec = backend.embedder.embed(image, face)
    if vec is not None:
        st.embeddings.append(vec)
        st.last_embed_t = t


def _close(st: _State) -> _State:
    st.face_writer.close()
    st.body_writer.close()
    return st


def _finalize(states: list[_State], out_dir: Path, fps: float, frame_count: int, params: TrackingParams) -> TrackingResult:
    """Drop short tracks, number the rest by first appearance (ties left to right), rename their clips."""
    keep, drop = [], []
    for st in states:
        long_enough = st.track.last - st.track.first + 1 >= params.min_track_s * fps
        (keep if long_enough and len(st.track.detections) >= params.min_detections else drop).append(st)
    for st in drop:
        st.face_writer.dst.unlink(missing_ok=True)
        st.body_writer.dst.unlink(missing_ok=True)
    keep.sort(key=lambda s: (s.track.first, (s.rows[0]["face"][0] + s.rows[0]["face"][2]) / 2))
    tracks, boxes, covered = [], [], set()
    for tid, st in enumerate(keep):
        face_path = st.face_writer.dst.rename(out_dir / f"track{tid:02d}_face.mp4")
        body_path = st.body_writer.dst.rename(out_dir / f"track{tid:02d}_body.mp4") if params.body_clips else None
        dets = st.track.detections.values()
        first, last = st.rows[0], st.rows[-1]
        n_frames = last["frame"] - first["frame"] + 1
        tracks.append({
            "track_id": tid, "status": "ok", "reason": None,
            "first_frame": first["frame"], "last_frame": last["frame"],
            "first_s": round(first["t"], 4), "last_s": round(last["t"], 4), "n_frames": n_frames,
            "n_detections": len(dets), "n_rescued": sum(d.detector.startswith("rescue") for d in dets), "coverage": round(n_frames / frame_count, 4),
            "face_size_median": float(statistics.median(size(r["face"]) for r in st.rows)),
            "score_mean": float(np.mean([d.score for d in dets])),
            "body_source": _track_body_source(st.rows),
            "face_clip_path": str(face_path), "body_clip_path": str(body_path) if body_path else None,
            "face_clip_size": [params.face_crop, params.face_crop], "body_clip_size": list(params.body_crop) if body_path else None,
            "fps": fps,
            "face_embedding": np.mean(st.embeddings, axis=0).round(6).tolist() if st.embeddings else None,
            "n_embeddings": len(st.embeddings), "params": params.as_dict(),
        })
        for r in st.rows:
            covered.add(r["frame"])
            boxes.append({
                "track_id": tid, "frame": r["frame"], "t": round(r["t"], 4),
                **{f"face_{c}": round(v, 2) for c, v in zip(("x1", "y1", "x2", "y2"), r["face"])},
                **{f"body_{c}": round(v, 2) for c, v in zip(("x1", "y1", "x2", "y2"), r["body"])},
                "face_source": r["face_source"], "body_source": r["body_source"], "score": r["score"],
                "detector": r["detector"],
            })
    presence = round(len(covered) / frame_count, 4) if frame_count else 0.0
    for row in tracks:
        row.update(clip_frames=frame_count, face_presence=presence)
    return TrackingResult(tracks=tracks, boxes=boxes, frame_count=frame_count, fps=fps, frames_with_face=len(covered))
