"""Does a change leave every output alone? Runs the demo (the main job, curation, export, leakage filter,
evaluation and report) at a base revision and on the working tree, each in its own temp data folder and Dagster
home, with the same deterministic loopback model answering, then compares what both left behind: every warehouse
table row by row, every file of the export folders and the reports (hvbench_assets/testkit/outputs.py says what is
left out: times, paths, ids, code versions, which are listed apart). Prints the differences; exit 1 if any.

Run: .venv/bin/python benchmarks/outputs_unchanged.py [--base REV] [--videos DIR] [--keep DIR]
  --base REV     the revision to compare with (default HEAD: checks the uncommitted changes; HEAD against HEAD
                 also shows whether the demo itself is repeatable)
  --videos DIR   the videos to run on (default: the demo's generated samples; the shared clips:
                 ../shared/videos, several minutes a clip)
  --keep DIR     keep both data folders there (base/, work/) to look at a difference
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer, FakeReply  # noqa: E402
from hvbench_assets.testkit.outputs import differences, fingerprint  # noqa: E402


def letter(request) -> FakeReply:
    """A reply that depends only on what was asked: the same prompt gets the same letter at both revisions."""
    digest = hashlib.sha256((request.prompt or "").encode()).digest()
    return FakeReply(text="ABCD"[digest[0] % 4])


def run_demo(tree: Path, out: Path, videos: Path | None, base_url: str) -> float:
    """The demo from `tree`'s code into out/data and out/home; its seconds."""
    home = out / "home"
    home.mkdir(parents=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HVBENCH_")}
    env.update(PYTHONPATH=str(tree), HVBENCH_DATA_DIR=str(out / "data"), DAGSTER_HOME=str(home), HF_HUB_OFFLINE="1",
               YOLO_OFFLINE="1", HVBENCH_MLLM_LOOP_BASE_URL=base_url, HVBENCH_MLLM_LOOP_MODEL="loop",
               HVBENCH_MLLM_MODELS="loop")
    args = [sys.executable, "-m", "hvbench_assets.demo"] + (["--videos", str(videos)] if videos else [])
    t0 = time.perf_counter()
    done = subprocess.run(args, cwd=tree, env=env, capture_output=True, text=True)
    (out / "demo.log").write_text(done.stdout + done.stderr)
    if done.returncode:
        raise SystemExit(f"the demo failed in {tree} (rc {done.returncode}); its output: {out / 'demo.log'}")
    return time.perf_counter() - t0


def main(argv: list[str]) -> int:
    opt = {a: argv[argv.index(a) + 1] for a in ("--base", "--videos", "--keep") if a in argv}
    base = opt.get("--base", "HEAD")
    videos = Path(opt["--videos"]).resolve() if "--videos" in opt else None
    work = Path(opt["--keep"]) if "--keep" in opt else Path(tempfile.mkdtemp(prefix="hvbench_outputs_"))
    for side in ("base", "work"):
        shutil.rmtree(work / side, ignore_errors=True)
    checkout = Path(tempfile.mkdtemp(prefix="hvbench_base_")) / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(checkout), base], check=True)
    try:
        with FakeOpenAIServer() as server:
            server.responder = letter
            took = {"base": run_demo(checkout, work / "base", videos, server.base_url),
                    "work": run_demo(ROOT, work / "work", videos, server.base_url)}
        prints = {side: fingerprint(work / side / "data", code) for side, code in (("base", checkout), ("work", ROOT))}
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(checkout)], check=False)
    (work / "fingerprints.json").write_text(json.dumps(prints, indent=1, sort_keys=True))
    diff = differences(prints["base"], prints["work"])
    print(f"base {base} ({took['base']:.0f} s) against the working tree ({took['work']:.0f} s) on "
          f"{videos or 'the demo samples'}: {len(prints['work']['entries'])} tables and files compared")
    print("\n".join(diff) if diff else "no output differs")
    if "--keep" not in opt:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if any(not line.startswith("code version") for line in diff) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
