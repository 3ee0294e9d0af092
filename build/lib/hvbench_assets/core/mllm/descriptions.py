"""L4 appearance, L5 facial description, L11 video caption: an MLLM describes a clip.

L4/L5 describe one track each, from the body-crop / face-crop clip that L1 wrote; L11 describes
the whole clip. Failures that retrying later may fix (429 / 5xx / timeouts outlasting the client's
retries) raise `DescriptionsIncomplete` so the partition fails and reruns (finished calls are
cached, so a rerun pays only for the missing ones); a wrong key or endpoint raises
`DescriberMisconfigured` (fix a setting, no rerun helps); answers that will not change (a refused,
empty or garbled reply) become rows with status `failed` and the reason.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hvbench_assets.core.media import MediaError, NoAudioError, load_audio
from hvbench_assets.core.media.paths import resolve, to_stored
from hvbench_assets.core.mllm.client import ChatRequest, ChatResult, MllmClient
from hvbench_assets.core.mllm.frames import sample_frames
from hvbench_assets.core.mllm.prompts import (
    APPEARANCE,
    FACIAL_DESCRIPTION,
    VIDEO_CAPTION,
    Prompt,
)
from hvbench_assets.core.mllm.registry import ModelSpec
from hvbench_assets.core.warehouse import TableSpec

_COMMON = (
    ("status", "VARCHAR"),  # ok | no_faces | unavailable | failed
    ("reason", "VARCHAR"),
    ("text", "VARCHAR"),
    ("model_name", "VARCHAR"),  # registry entry (the `model` column holds the model id)
    ("prompt_name", "VARCHAR"),
    ("prompt_hash", "VARCHAR"),  # Prompt.fingerprint: text + frames + params
    ("call_id", "VARCHAR"),  # model_calls.id
    ("clip_path", "VARCHAR"),  # the clip the frames came from
    ("frames_sent", "INTEGER"),
    ("tokens_in", "INTEGER"),
    ("tokens_out", "INTEGER"),
)

APPEARANCE_TABLE = TableSpec(
    "appearance", (("video_id", "VARCHAR"), ("track_id", "INTEGER")) + _COMMON,
    description="L4: MLLM description of each track's body-cropped clip",
)
FACIAL_DESCRIPTION_TABLE = TableSpec(
    "facial_description", (("video_id", "VARCHAR"), ("track_id", "INTEGER")) + _COMMON,
    description="L5: MLLM description of each track's face-cropped clip (expression and emotion over time)",
)
VIDEO_CAPTION_TABLE = TableSpec(
    "video_caption", (("video_id", "VARCHAR"),) + _COMMON,
    description="L11: MLLM summary of the clip's setting, people and events",
)

TRACK_LABELS: dict[str, tuple[Prompt, TableSpec, str]] = {
    "appearance": (APPEARANCE, APPEARANCE_TABLE, "body_clip_path"),
    "facial_description": (FACIAL_DESCRIPTION, FACIAL_DESCRIPTION_TABLE, "face_clip_path"),
}


class DescriptionsIncomplete(RuntimeError):
    """Some calls hit transient faults beyond the retry budget; rerun later."""


class DescriberMisconfigured(RuntimeError):
    """Authentication or configuration of the describer is wrong; the message names the setting."""


class BadCropClip(RuntimeError):
    """A crop clip named by L1 is missing or unreadable."""


def describer_fingerprint(spec: ModelSpec | None) -> str:
    """What about the describer model changes its answers (not where it is served)."""
    if spec is None:
        return "unconfigured"
    keep = {k: getattr(spec, k) for k in ("backend", "model_id", "max_frames", "max_side", "jpeg_quality")}
    return hashlib.sha256(json.dumps(keep, sort_keys=True).encode()).hexdigest()[:8]


def code_version(base: str, prompt: Prompt, spec: ModelSpec | None) -> str:
    return f"{base}-p{prompt.fingerprint}-m{describer_fingerprint(spec)}"


def _row(result: ChatResult | None, spec: ModelSpec, prompt: Prompt, clip_path: Any, **extra) -> dict:
    row = {"model_name": spec.name, "prompt_name": prompt.name, "prompt_hash": prompt.fingerprint,
           "clip_path": to_stored(clip_path), **extra}
    if result is not None:
        row.update(call_id=result.call_id, frames_sent=result.frames_sent, tokens_in=result.tokens_in,
                   tokens_out=result.tokens_out)
        if result.ok:
            row.update(status="ok", reason=None, text=result.text)
        else:
            row.update(status="failed", reason=result.error, text=None)
    return row


def _raise_transient(results: Sequence[ChatResult], what: str) -> None:
    fatal = [r for r in results if r.fatal]
    if fatal:
        raise DescriberMisconfigured(fatal[0].error)
    transient = [r for r in results if r.transient]
    if transient:
        raise DescriptionsIncomplete(
            f"{len(transient)} of {len(results)} {what} calls still failing after retries: {transient[0].error}"
        )


def describe_tracks(
    client: MllmClient, spec: ModelSpec, label: str, video_id: str, track_rows: Sequence[Mapping[str, Any]]
) -> tuple[list[dict], list[ChatResult]]:
    """Rows of L4 (`label="appearance"`) or L5 (`"facial_description"`) for one clip's L1 rows."""
    prompt, _, path_column = TRACK_LABELS[label]
    rows: list[dict] = []
    requests: list[tuple[dict, Path, ChatRequest]] = []
    for tr in track_rows:
        if tr.get("status") != "ok" or tr.get("track_id") is None:
            rows.append(_row(None, spec, prompt, None, track_id=tr.get("track_id"),
                             status=tr.get("status") or "unavailable", reason=tr.get("reason"), text=None))
            continue
        path = resolve(tr.get(path_column))
        if not path:
            rows.append(_row(None, spec, prompt, None, track_id=tr["track_id"], status="unavailable",
                             reason=f"L1 wrote no {path_column} for this track", text=None))
            continue
        if not Path(path).exists():
            raise BadCropClip(f"{path_column} of track {tr['track_id']} does not exist: {path} (rematerialize human_tracks)")
        try:
            frames = sample_frames(path, n_frames=prompt.n_frames, fps=prompt.fps, max_side=spec.max_side)
        except MediaError as exc:
            raise BadCropClip(f"{path_column} of track {tr['track_id']}: {exc}") from exc
        row = _row(None, spec, prompt, path, track_id=tr["track_id"])
        requests.append((row, path, ChatRequest(
            model=spec.name, prompt=prompt.user, frames=frames, system=prompt.system, params=prompt.params,
            context={"video_id": video_id, "track_id": tr["track_id"], "label": label, "clip": to_stored(path)},
        )))
    results = client.chat_many([r for _, _, r in requests])
    _raise_transient(results, label)
    for (row, path, _), result in zip(requests, results):
        row.update(_row(result, spec, prompt, path, track_id=row["track_id"]))
        rows.append(row)
    rows.sort(key=lambda r: (r["track_id"] is None, r["track_id"] if r["track_id"] is not None else 0))
    return rows, results


def describe_video(
    client: MllmClient, spec: ModelSpec, video_id: str, clip_path: str | Path, has_audio: bool
) -> tuple[dict, ChatResult]:
    """The L11 row of one clip. The clip's audio goes along when the model accepts audio."""
    prompt = VIDEO_CAPTION
    try:
        frames = sample_frames(clip_path, n_frames=prompt.n_frames, fps=prompt.fps, max_side=spec.max_side)
    except MediaError as exc:
        raise BadCropClip(str(exc)) from exc
    audio = None
    if has_audio and spec.accepts_audio:
        try:
            audio = load_audio(clip_path)
        except NoAudioError:
            audio = None
    result = client.chat(spec.name, prompt.user, frames=frames, system=prompt.system, audio=audio,
                         params=prompt.params, context={"video_id": video_id, "label": "video_caption",
                                                        "clip": to_stored(clip_path)})
    _raise_transient([result], "video_caption")
    return _row(result, spec, prompt, clip_path), result


def preview_markdown(rows: Sequence[Mapping[str, Any]], key: str | None = "track_id", width: int = 160) -> str:
    head = ("| track " if key else "") + "| status | text or reason |\n" + ("|---" if key else "") + "|---|---|\n"
    lines = []
    for r in rows:
        body = (r.get("text") or r.get("reason") or "").replace("|", "/").replace("\n", " ")
        body = body if len(body) <= width else body[: width - 1] + "…"
        lines.append((f"| {r.get(key)} " if key else "") + f"| {r['status']} | {body} |")
    return head + "\n".join(lines)
