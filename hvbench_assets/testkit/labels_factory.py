"""Hand-made label rows for task-rule tests: a clip, its tracks with boxes, and the label tables."""

from __future__ import annotations

from pathlib import Path

from hvbench_assets.core.ingest.tables import ClipInfo
from hvbench_assets.core.tasks.labels import ClipLabels
from hvbench_assets.core.vision.tables import Track, TrackBox


def track(tid: int, first: int, last: int, x: float = 100.0, fps: float = 25.0, size: float = 60.0,
          detected: int | None = None, face_source: str = "interpolated") -> Track:
    """`detected`: only the first this many frames have a detected face, the rest `face_source` (a body-only
    track: detected=0, face_source="estimated"); None: every frame detected."""
    n = last - first + 1 if detected is None else detected
    boxes = [TrackBox(frame=f, t=f / fps, face=(x, 50.0, x + size, 50.0 + size), body=(x, 50.0, x + size, 200.0),
                      face_source="detected" if f - first < n else face_source, body_source="estimated")
             for f in range(first, last + 1)]
    return Track(video_id="clip", track_id=tid, first_frame=first, last_frame=last, first_s=first / fps,
                 last_s=last / fps, coverage=0.0, face_size_median=size, fps=fps, face_clip_path=None,
                 body_clip_path=None, boxes=boxes)


def clip_labels(duration_s: float = 10.0, fps: float = 25.0, tracks: list[Track] | None = None,
                persons: list[list[int]] | None = None, people: int | None = None, speech: bool = True,
                speaking: tuple[int, ...] = (), transcript: dict | None = None, voice: str | None = None,
                faces: dict[int, dict] | None = None, appearance: bool = True, path: Path | None = None,
                sha: str = "ab" * 32, music: bool = False, detect_fps: float | None = None) -> ClipLabels:
    tracks = tracks if tracks is not None else []
    if speaking and voice is None and faces is None:
        # ASD asks only where the voice's class confirms the speaker's face (core/tasks/agreement.py): by default a
        # clip with a speaker has a man's voice and confident men's faces
        voice, faces = "male", {t.track_id: {"status": "ok", "age": 35, "gender": "Man", "gender_share": 1.0}
                                for t in tracks}
    frames = int(round(duration_s * fps))
    groups = persons if persons is not None else [[t.track_id] for t in tracks]
    n = people if people is not None else len(groups)
    clip = ClipInfo(video_id="clip", path=path or Path("/nonexistent/clip.mp4"), duration_s=duration_s, fps=fps,
                    frame_count=frames, width=640, height=360, has_audio=True, sha256=sha)
    rows = {
        "human_tracks": [{"video_id": "clip", "track_id": t.track_id, "status": "ok", "clip_frames": frames,
                          "n_frames": t.n_frames, "params": {"detect_fps": detect_fps} if detect_fps else None}
                         for t in tracks]
                        or [{"video_id": "clip", "track_id": None, "status": "no_faces", "clip_frames": frames}],
        "person_count": [{"video_id": "clip", "status": "ok" if n else "no_faces", "person_count": n, "persons": groups}],
        "audio_tags": [{"video_id": "clip", "status": "ok", "is_speech": speech, "is_music": music,
                        "sound_type": "speech" if speech else "silence"}],
        "speaker_scores": [{"video_id": "clip", "track_id": t.track_id, "status": "ok", "speaking": t.track_id in speaking}
                           for t in tracks],
        "transcript": [transcript or {"video_id": "clip", "status": "ok", "language": "en",
                                      "text": "we are testing the speech content matching rule today"}],
        "voice_demographics": [{"video_id": "clip", "status": "ok" if voice else "no_speech", "voice_class": voice,
                                "confidence": 0.9}],
        "demographics": [{"video_id": "clip", "track_id": t.track_id, **(faces or {}).get(t.track_id, {"status": "unavailable"})}
                         for t in tracks],
        "appearance": [{"video_id": "clip", "track_id": t.track_id, "status": "ok" if appearance else "failed",
                        "text": f"a person in a red shirt number {t.track_id}"} for t in tracks],
    }
    return ClipLabels(clip=clip, rows=rows, tracks=tracks)


def full(tid: int, duration_s: float = 10.0, fps: float = 25.0, x: float = 100.0) -> Track:
    return track(tid, 0, int(round(duration_s * fps)) - 1, x=x, fps=fps)
