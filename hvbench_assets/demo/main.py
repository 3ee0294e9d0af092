"""The main job on the embedded defaults, end to end, without the UI.

    python -m hvbench_assets.demo [--videos DIR]

Drops videos into the inbox (generated samples unless --videos is given), lets the real inbox sensor
pick them up, runs `raw_video_job` for every file and `clip_labels_job` for every kept clip on the
local Dagster instance (DAGSTER_HOME, so the runs show in the UI afterwards), then `curation_job` and
`benchmark_job` (pool, blind leakage filter, export folder), prints what the warehouse holds, and
evaluates the export with every configured answering model through `evaluation_job` and `eval_report_job`
(or says how to configure one).
"""

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import numpy as np

from hvbench_assets.core.evaluation.summary import benchmark_summary
from hvbench_assets.core.media import write_video
from hvbench_assets.core.media.encode import AUDIO_RATE
from hvbench_assets.core.media.paths import resolve
from hvbench_assets.core.settings import PROJECT_ROOT, seed_dagster_home
from hvbench_assets.core.speakers.tables import SPEAKER_SCORES
from hvbench_assets.core.tasks.describe import questions_text
from hvbench_assets.demo.benchmark import assemble, evaluate_export
from hvbench_assets.demo.runs import execute
from hvbench_assets.demo.samples import photos


def raw_video_job():
    from hvbench_assets.definitions import defs

    return defs().resolve_job_def("raw_video_job")


def clip_labels_job():
    from hvbench_assets.definitions import defs

    return defs().resolve_job_def("clip_labels_job")


def clip_offline_labels_job():
    from hvbench_assets.definitions import defs

    return defs().resolve_job_def("clip_offline_labels_job")


def _speech(text: str, seconds: float) -> np.ndarray:
    """espeak-ng speech when installed, else a voiced-like harmonic tone; padded to `seconds`."""
    n = int(seconds * AUDIO_RATE)
    if shutil.which("espeak-ng"):
        wav = Path(os.environ.get("TMPDIR", "/tmp")) / f"hvbench_demo_{os.getpid()}.wav"
        subprocess.run(["espeak-ng", "-s", "150", "-w", str(wav), text], check=True, capture_output=True)
        from hvbench_assets.core.media import load_audio

        audio = load_audio(wav, sample_rate=AUDIO_RATE)
        wav.unlink(missing_ok=True)
    else:
        t = np.arange(n) / AUDIO_RATE
        audio = sum(0.08 / k * np.sin(2 * np.pi * 140 * k * t) for k in range(1, 6)).astype(np.float32)
    return np.pad(audio, (0, max(0, n - len(audio))))[:n].astype(np.float32)


def make_samples(inbox: Path) -> list[Path]:
    """Generated input: a two-shot video (two people, one of them talking with the sound track, then moving
    shapes over silence) that splits into two clips, and a static video that the motion filter drops."""
    from hvbench_assets.demo.samples import two_people_talking

    inbox.mkdir(parents=True, exist_ok=True)
    two_shots, static = inbox / "Sample – two shots.mp4", inbox / "sample_static.mp4"
    if two_shots.is_file() and static.is_file():  # kept as they are (their mtime too): the sensors see nothing new
        return [two_shots, static]
    fps, w, h, talk_s, shapes_s = 25, 480, 360, 9.0, 4.0
    n = int(shapes_s * fps)
    yy, xx = np.mgrid[0:h, 0:w]

    def shapes_shot(seed: int, frames: int = n):
        base = np.stack([(xx * 255 // w), (yy * 255 // h), np.full_like(xx, 60 + 120 * seed)], -1).astype(np.uint8)
        checker = ((np.indices((90, 90)).sum(0) // 10) % 2).astype(bool)[..., None]
        tile = np.where(checker, np.uint8(230), np.uint8(30 + 100 * seed))
        for i in range(frames):
            img = base.copy()
            x = int((w - 90) * i / (frames - 1))
            y = h // 2 - 45 + int(40 * np.sin(i / 6 + seed))
            img[y : y + 90, x : x + 90] = tile
            yield img

    speech = _speech("Hello, I am the person on the left, and I am talking to you now. My friend on the right "
                     "listens quietly. This clip shows how the benchmark finds who is speaking.", talk_s)
    audio = np.concatenate([speech, np.zeros(int(shapes_s * AUDIO_RATE), np.float32)])
    def both():
        yield from two_people_talking(talk_s, speech, fps=fps, size=(w, h)) or shapes_shot(0, int(talk_s * fps))
        yield from shapes_shot(1)

    write_video(two_shots, both(), fps=fps, audio=audio)
    write_video(static, (np.full((h, w, 3), 128, np.uint8) for _ in range(75)), fps=fps)
    return [two_shots, static]


def _launch(tick, job_fn, req: dg.RunRequest, instance: dg.DagsterInstance) -> bool:
    """Run `req` now, tagged as the daemon tags a run it launches for the sensor (source file and range included)."""
    result = execute(job_fn, instance, tick.run_tags(req))
    tick.launched(req, result.run_id)
    return result.success


def run(videos: Path | None) -> int:
    from hvbench_assets.defs.resources import build_resources
    from hvbench_assets.runtime.batch import request_label
    from hvbench_assets.runtime.sensor_ticks import SensorTicks

    resources = build_resources()
    # fields set from the environment are EnvVars until Dagster resolves them; resolve them the same way here
    settings = resources["settings"].process_config_and_initialize()
    warehouse = resources["warehouse"].process_config_and_initialize().get()
    benchmark = resources["benchmark"].process_config_and_initialize()
    inbox = settings.inbox
    if videos:
        inbox.mkdir(parents=True, exist_ok=True)
        placed = []
        for p in sorted(videos.iterdir()):
            if p.is_file():
                placed.append(Path(shutil.copy2(p, inbox / p.name)))
        print(f"copied {len(placed)} file(s) from {videos} into {inbox}")
    else:
        placed = make_samples(inbox)
        for p in placed:
            print(f"generated {p}")
    old = time.time() - 3600  # the files placed here are complete: let them count as settled
    for p in placed:
        os.utime(p, (old, old))
    ok = True
    # sensor ticks as the daemon takes them (stored cursors and ticks): `dagster dev` later goes on from here
    with dg.DagsterInstance.get() as instance, SensorTicks(instance) as ticks:
        said = False
        for _ in range(2):  # the sensor wants to see a file unchanged twice
            with ticks.tick("inbox_sensor") as tick:
                if not tick.run_requests:
                    continue
                said = True
                print(f"inbox_sensor requested {len(tick.run_requests)} raw_video_job run(s)")
                for req in tick.run_requests:
                    success = _launch(tick, raw_video_job, req, instance)
                    ok &= success
                    print(f"  raw_videos/{req.partition_key}: {'ok' if success else 'FAILED (see the run in the UI)'}")
        if not said:
            print("inbox_sensor requested 0 raw_video_job run(s)")
        jobs = {"clip_labels_job": clip_labels_job, "clip_offline_labels_job": clip_offline_labels_job}
        with ticks.tick("clip_sensor") as tick:
            print(f"clip_sensor requested {len(tick.run_requests)} per-clip run(s)")
            for req in tick.run_requests:
                print(f"  {req.job_name} {request_label(req)} ...", flush=True)
                success = _launch(tick, jobs[req.job_name], req, instance)
                ok &= success
                print(f"  {request_label(req)}: {'ok' if success else 'FAILED (see the run in the UI)'}")
        if warehouse.has_table("questions"):  # the clips' questions -> the exported benchmark
            built, bench_lines = assemble(instance, warehouse, benchmark, settings.data_dir, ticks)
            ok &= built
    print()
    print(summary(warehouse))
    print("\n== questions (hvbench questions --candidates prints them again) ==")
    print(questions_text(warehouse, candidates=True) if warehouse.has_table("questions") else "no task ran")
    if warehouse.has_table("questions"):
        print("\n" + "\n".join(bench_lines))
        if built:
            with dg.DagsterInstance.get() as instance:
                evaluated, eval_lines = evaluate_export(instance, resources["mllm"].process_config_and_initialize(),
                                                        settings, benchmark)
            ok &= evaluated
            print("\n".join(eval_lines))
        print("\n" + "\n".join(benchmark_summary(warehouse, benchmark.name, benchmark.folder(settings.data_dir))))
    print(f"\nWarehouse: {warehouse.path}\nOpen the UI:  DAGSTER_HOME={os.environ.get('DAGSTER_HOME')} "
          f".venv/bin/dagster dev -w workspace.yaml   (then http://127.0.0.1:3000)")
    gaps = ran_without(warehouse, resources["mllm"].process_config_and_initialize(), generated=not videos)
    print("\n== what ran without what ==\n" + ("\n".join(f"- {g}" for g in gaps) if gaps else "nothing missing"))
    return 0 if ok else 1


def ran_without(wh, mllm, generated: bool) -> list[str]:
    """Which parts of this demo ran without something they need, and what that changed."""
    from hvbench_assets.defs.ingest.sensors import describer_configured

    gaps = []
    if generated and not shutil.which("espeak-ng"):
        gaps.append("no espeak-ng: the sample has no speech (a hum stands in), so transcript, voice and speaker "
                    "labels had no words to hear (apt-get install espeak-ng, or rerun scripts/setup.sh as root)")
    if generated and photos() is None:
        gaps.append("no scikit-image (the `demo` extra): the sample shows moving shapes, no person, so the face "
                    "labels are empty (pip install -e '.[demo]')")
    missing = describer_configured(mllm)
    if missing:
        gaps.append(f"no MLLM describer: appearance, facial_description and video_caption did not run ({missing})")
    tables = [r["table_name"] for r in wh.query("SELECT DISTINCT table_name FROM information_schema.columns "
                                                "WHERE column_name = 'status' AND table_name IN (SELECT table_name FROM "
                                                "information_schema.columns WHERE column_name = 'reason') ORDER BY 1")]
    for t in tables:
        rows = wh.query(f'SELECT count(*) AS n, any_value(reason) AS why FROM "{t}" WHERE status = \'unavailable\'')
        if rows and rows[0]["n"]:
            reason = str(rows[0]["why"] or "no reason stored")
            gaps.append(f"{t}: {rows[0]['n']} row(s) unavailable, {reason[:140]}{'…' if len(reason) > 140 else ''}")
    return gaps


def _one(wh, sql: str, params: list) -> dict | None:
    try:
        rows = wh.query(sql, params)
    except Exception:  # a label table that this run did not produce
        return None
    return rows[0] if rows else None


def _clip_overview(wh, vid: str) -> list[str]:
    """The labels of one clip in a few human-readable lines."""
    probe = _one(wh, "SELECT duration_s, width, height, has_audio FROM video_probe WHERE video_id = ?", [vid]) or {}
    lines = [f"{vid}: {probe.get('duration_s', 0):.1f}s {probe.get('width')}x{probe.get('height')}"
             f"{'' if probe.get('has_audio') else ', no audio'}"]
    people = _one(wh, "SELECT status, person_count, n_tracks FROM person_count WHERE video_id = ?", [vid])
    if people:
        lines.append(f"  people: {people['person_count'] if people['status'] == 'ok' else 0} "
                     f"({people['n_tracks'] or 0} face track(s); {people['status']})")
    tracks = wh.query("SELECT track_id, first_s, last_s, face_clip_path FROM human_tracks "
                      "WHERE video_id = ? AND status = 'ok' ORDER BY track_id", [vid]) if wh.has_table("human_tracks") else []
    for t in tracks:
        lines.append(f"    track {t['track_id']}: {t['first_s']:.1f}-{t['last_s']:.1f}s, face crop {resolve(t['face_clip_path'])}")
    demo = _one(wh, "SELECT status, reason FROM demographics WHERE video_id = ? LIMIT 1", [vid])
    if demo:
        lines.append(f"  demographics: {demo['status']}" + (f" ({demo['reason'][:90]}…)" if demo["status"] != "ok" else ""))
    tags = _one(wh, "SELECT status, sound_type, speech_s FROM audio_tags WHERE video_id = ?", [vid])
    if tags:
        lines.append(f"  sound: {tags['sound_type'] or tags['status']}"
                     + (f" ({tags['speech_s']:.1f}s of speech)" if tags["speech_s"] else ""))
    text = _one(wh, "SELECT status, language, text FROM transcript WHERE video_id = ?", [vid])
    if text:
        lines.append(f"  transcript: {text['status']}" + (f" [{text['language']}] \"{text['text']}\"" if text["text"] else ""))
    voice = _one(wh, "SELECT status, voice_class, confidence, method FROM voice_demographics WHERE video_id = ?", [vid])
    if voice:
        lines.append(f"  voice: {voice['voice_class'] or voice['status']}"
                     + (f" ({voice['confidence']:.2f}, {voice['method']})" if voice["voice_class"] else ""))
    for sp in wh.rows(SPEAKER_SCORES, video_id=vid, status="ok", order_by="track_id"):
        best = f", best score {max(sp['scores']):+.2f}" if sp["scores"] else ""  # < 0: never above its speaking bar
        lines.append(f"  track {sp['track_id']} {'speaks' if sp['speaking'] else 'does not speak'} "
                     f"(longest positive run {sp['longest_run']} frames{best})")
    return lines


def summary(wh) -> str:
    """Row counts, what happened to every clip, and the labels of each kept clip."""
    tables = [r["table_name"] for r in wh.query("SELECT table_name FROM information_schema.tables ORDER BY 1")]
    lines = ["== warehouse tables =="]
    for t in tables:
        n = wh.query(f'SELECT count(*) AS n FROM "{t}"')[0]["n"]
        lines.append(f"{t:28s} {n:6d} rows")
    if "clips" not in tables:
        return "\n".join(lines)
    lines.append("\n== clips ==")
    clips = wh.query("SELECT raw_video_id, clip_index, video_id, start_s, end_s, kept, reason FROM clips ORDER BY 1, 2")
    for r in clips:
        lines.append(f"{r['raw_video_id']}#{r['clip_index']}  {r['start_s']:6.2f}-{r['end_s']:6.2f}s  "
                     f"{'kept   ' if r['kept'] else 'dropped'}  {r['reason']}")
    lines.append("\n== labels per kept clip ==")
    for r in clips:
        if r["kept"]:
            lines += _clip_overview(wh, r["video_id"])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--videos", type=Path, help="a folder of your own videos instead of generated samples")
    args = parser.parse_args(argv)
    os.environ.setdefault("DAGSTER_HOME", str(PROJECT_ROOT / "dagster_home"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("YOLO_OFFLINE", "1")
    os.environ.setdefault("HVBENCH_EVAL_ARMS", "all")  # a configured model answers each item four ways
    if seed_dagster_home(Path(os.environ["DAGSTER_HOME"])):
        print(f"DAGSTER_HOME {os.environ['DAGSTER_HOME']} is new: it got hvbench's instance settings "
              f"({PROJECT_ROOT / 'dagster_home' / 'dagster.yaml'})")
    if args.videos and not args.videos.is_dir():
        parser.error(f"--videos {args.videos}: not a folder")
    return run(args.videos)


if __name__ == "__main__":
    sys.exit(main())
