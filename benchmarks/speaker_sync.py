"""Which voice envelope does a mouth follow? Window-level synchrony of real talking heads with their own
voice against other voices and their own voice shifted in time.

Run: .venv/bin/python benchmarks/speaker_sync.py

Two real speakers from ../shared/videos as fixed 224 px face crops at 30 fps (the man of man_talking_head, 0-5 s;
the front woman of two_people_talking, 11-22.4 s, who talks from 13 s on, and her silent-ish 0-11 s as a
third, mouthing-only track). Every 4 s window of a face (every 0.5 s) is paired with every 4 s window of each
voice: a pair is positive when face and voice are the same person at the same time, negative when the voice
is someone else's or the same person's at least 1.5 s earlier or later (a mouth moving with other words).
For each way of reading the voice it prints the AUC of the synchrony (motion and lip opening averaged, as
`core.speakers.avsync.windowed_av_sync` computes it), positives' minimum and median per speaker, and the
negatives' 95th percentile and maximum: the margin `min_sync` must sit in."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from hvbench_assets.core.media import load_audio  # noqa: E402
from hvbench_assets.core.speakers.avsync import (  # noqa: E402
    loudness_per_frame,
    mouth_streams,
    voice_envelopes,
    windowed_av_sync,
)
from hvbench_assets.core.speakers.lips import mouth_signals  # noqa: E402
from hvbench_assets.testkit.speaker_composites import FPS, MAN, WOMAN, Panel, panel_frames  # noqa: E402

SHARED = ROOT.parent / "shared" / "videos"
WINDOW, STEP, MIN_SHIFT = int(4 * FPS), int(0.5 * FPS), int(1.5 * FPS)
TRACKS = {  # name: (panel, seconds, first second whose windows are positives; None: mouthing only)
    "man": (MAN, 5.0, 0.0),
    "woman": (Panel("woman", WOMAN.clip, 11.0, WOMAN.crop, 1), 11.4, 13.0),
    "woman_early": (Panel("woman_early", WOMAN.clip, 0.0, WOMAN.crop, 1), 11.0, None),
}
ENVELOPES = {
    "wideband loudness (until 2026-11-24)": lambda a, n: loudness_per_frame(a, n, FPS),
    "1-3 kHz": lambda a, n: voice_envelopes(a, n, FPS, ((1000.0, 3000.0),)),
    "3-7 kHz": lambda a, n: voice_envelopes(a, n, FPS, ((3000.0, 7000.0),)),
    "1-3 and 3-7 kHz (L7 now)": lambda a, n: voice_envelopes(a, n, FPS),
}


def load(name: str):
    panel, seconds, _ = TRACKS[name]
    sig = mouth_signals(panel_frames(panel, SHARED, seconds, 224))
    audio = load_audio(SHARED / panel.clip, start_s=panel.start_s, end_s=panel.start_s + seconds)
    return sig, audio


def pairs(lengths: dict[str, int]) -> list[tuple[str, int, str, int, bool]]:
    out = []
    for face, (panel, _, talks_from) in TRACKS.items():
        for voice, (vpanel, _, voice_from) in TRACKS.items():
            if voice_from is None:
                continue  # the early woman's sound is mostly someone else's or silence
            for fs in range(0, lengths[face] - WINDOW + 1, STEP):
                for vs in range(0, lengths[voice] - WINDOW + 1, STEP):
                    if face != voice:
                        out.append((face, fs, voice, vs, False))
                    elif fs == vs and talks_from is not None and panel.start_s + fs / FPS >= talks_from:
                        out.append((face, fs, voice, vs, True))
                    elif abs(fs - vs) >= MIN_SHIFT:
                        out.append((face, fs, voice, vs, False))
    return out


def main() -> None:
    data = {name: load(name) for name in TRACKS}
    lengths = {name: len(sig.opening) for name, (sig, _) in data.items()}
    todo = pairs(lengths)
    print(f"{len(todo)} window pairs, {sum(p[-1] for p in todo)} positive")
    print(f"{'voice read as':38} {'AUC':>5}  positives min / median per speaker     negatives p95 / max")
    for label, envelope in ENVELOPES.items():
        env = {name: np.atleast_2d(envelope(audio, lengths[name])) for name, (_, audio) in data.items()}
        vals, labels, per, against = [], [], {}, {}
        for face, fs, voice, vs, positive in todo:
            sig = data[face][0]
            sl = slice(fs, fs + WINDOW)
            streams = mouth_streams(sig.motion[sl], sig.opening[sl])
            seen = sig.seen[sl] & np.isfinite(sig.opening[sl])
            v = float(np.nanmax(windowed_av_sync(streams, env[voice][:, vs : vs + WINDOW], seen, FPS)))
            vals.append(v)
            labels.append(positive)
            if positive:
                per.setdefault(face, []).append(v)
            else:
                against.setdefault(f"{face}<-{voice}{'(shifted)' if face == voice else ''}", []).append(v)
        vals, labels = np.array(vals), np.array(labels)
        pos, neg = vals[labels], vals[~labels]
        auc = float(np.mean([(p > neg).mean() + 0.5 * (p == neg).mean() for p in pos]))
        speakers = "  ".join(f"{k} {min(v):+.2f} / {np.median(v):+.2f}" for k, v in per.items())
        print(f"{label:38} {auc:5.3f}  {speakers:38} {np.percentile(neg, 95):+.2f} / {neg.max():+.2f}")
        print(" " * 46 + "negatives p95 / max: " + "  ".join(f"{k} {np.percentile(v, 95):+.2f} / {max(v):+.2f}"
                                                            for k, v in against.items()))


if __name__ == "__main__":
    main()
