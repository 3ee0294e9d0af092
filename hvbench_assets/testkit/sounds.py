"""Generated sounds for the audio tests and benchmarks: tones, chords, piano-like notes over a beat,
a sung-vowel melody, and espeak-ng speech mixed over music (all 16 kHz mono float32, deterministic)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hvbench_assets.core.media import SAMPLE_RATE, write_video
from hvbench_assets.core.media.encode import AUDIO_RATE

SR = SAMPLE_RATE
C_MAJOR_CHORDS = ((261.63, 329.63, 392.0), (220.0, 261.63, 329.63), (174.61, 220.0, 261.63), (196.0, 246.94, 293.66))
MELODY_HZ = (523.25, 587.33, 659.25, 698.46, 783.99, 659.25, 587.33, 523.25)


def _t(seconds: float) -> np.ndarray:
    return np.arange(int(seconds * SR)) / SR


def tone(seconds: float = 4.0, hz: float = 440.0, amp: float = 0.3) -> np.ndarray:
    return (amp * np.sin(2 * np.pi * hz * _t(seconds))).astype(np.float32)


def harmonic_note(hz: float, seconds: float, decay: float = 0.0, partials: int = 6, amp: float = 0.2) -> np.ndarray:
    """A note with 1/k harmonics; decay > 0 gives a struck (piano-like) envelope, 0 a held (organ) one."""
    t = _t(seconds)
    x = sum((amp / k) * np.sin(2 * np.pi * hz * k * t) for k in range(1, partials + 1))
    attack = np.minimum(1.0, t / 0.01)
    return (x * attack * np.exp(-decay * t)).astype(np.float32)


def chords(seconds: float = 8.0, chord_s: float = 1.0) -> np.ndarray:
    """Held triads changing every chord_s (a pad / organ progression)."""
    out = []
    for i in range(int(np.ceil(seconds / chord_s))):
        notes = C_MAJOR_CHORDS[i % len(C_MAJOR_CHORDS)]
        out.append(sum(harmonic_note(f, chord_s, amp=0.12) for f in notes))
    return np.concatenate(out)[: int(seconds * SR)].astype(np.float32)


def beat(seconds: float, bpm: float = 100.0, amp: float = 0.5) -> np.ndarray:
    """Kick (a falling low sine) on every beat, a noise hi-hat on the off-beats."""
    rng = np.random.default_rng(7)
    out = np.zeros(int(seconds * SR), np.float32)
    step = 60.0 / bpm
    kick_t = _t(0.15)
    kick = amp * np.sin(2 * np.pi * (120 * kick_t - 200 * kick_t**2)) * np.exp(-kick_t * 25)
    hat = 0.25 * amp * rng.standard_normal(int(0.05 * SR)) * np.exp(-_t(0.05) * 80)
    for i in range(int(seconds / step * 2)):
        start = int(i * step / 2 * SR)
        sound = kick if i % 2 == 0 else hat
        end = min(len(out), start + len(sound))
        out[start:end] += sound[: end - start]
    return out


def piano_with_beat(seconds: float = 8.0, bpm: float = 100.0) -> np.ndarray:
    """Struck melody notes on every beat over decaying chords every bar, with a drum beat."""
    out = np.zeros(int(seconds * SR), np.float32)
    step = 60.0 / bpm
    for i in range(int(seconds / step)):
        start = int(i * step * SR)
        note = harmonic_note(MELODY_HZ[i % len(MELODY_HZ)], 2 * step, decay=2.5)
        if i % 4 == 0:
            note = note + sum(harmonic_note(f / 2, 4 * step, decay=1.0, amp=0.1) for f in C_MAJOR_CHORDS[(i // 4) % 4])[: len(note)]
        end = min(len(out), start + len(note))
        out[start:end] += note[: end - start]
    return (out + beat(seconds, bpm)).astype(np.float32)


def sung_vowels(seconds: float = 8.0, note_s: float = 0.6, base_hz: float = 220.0) -> np.ndarray:
    """A singing-like voice: a glottal-pulse-rich tone with 5.5 Hz vibrato holding the notes of a melody,
    shaped by /a/ formants (700, 1200, 2600 Hz), with short breaths between notes."""
    steps = (0, 2, 4, 5, 7, 5, 4, 2)
    n_notes = int(np.ceil(seconds / note_s))
    f0 = np.concatenate([np.full(int(note_s * SR), base_hz * 2 ** (steps[i % len(steps)] / 12)) for i in range(n_notes)])
    t = np.arange(len(f0)) / SR
    f0 = f0 * 2 ** (0.35 / 12 * np.sin(2 * np.pi * 5.5 * t))  # vibrato of +-35 cents
    phase = 2 * np.pi * np.cumsum(f0) / SR
    source = sum(np.sin(k * phase) / k**1.2 for k in range(1, 25))
    spectrum = np.fft.rfft(source)
    freqs = np.fft.rfftfreq(len(source), 1 / SR)
    formants = sum(g / (1 + ((freqs - fc) / (bw / 2)) ** 2) for fc, bw, g in ((700, 110, 1.0), (1200, 120, 0.6), (2600, 160, 0.25)))
    voice = np.fft.irfft(spectrum * formants, n=len(source))
    env = np.ones(len(f0))
    gap = int(0.08 * SR)
    for i in range(1, n_notes):
        env[i * int(note_s * SR) - gap : i * int(note_s * SR)] = 0.05
    voice = voice * env
    return (0.3 * voice / np.max(np.abs(voice))).astype(np.float32)[: int(seconds * SR)]


def white_noise(seconds: float = 4.0, amp: float = 0.1) -> np.ndarray:
    return (amp * np.random.default_rng(3).standard_normal(int(seconds * SR))).astype(np.float32)


def mix(speech: np.ndarray, music: np.ndarray, music_db: float = -6.0) -> np.ndarray:
    """Speech over music, the music `music_db` below the speech (RMS over the speech's length)."""
    n = max(len(speech), len(music))
    s = np.pad(speech, (0, n - len(speech)))
    m = np.resize(music, n)
    rms = lambda x: float(np.sqrt(np.mean(x.astype(np.float64) ** 2)) + 1e-9)  # noqa: E731
    m = m * (rms(speech) / rms(m)) * 10 ** (music_db / 20)
    out = s + m
    return (out / max(1.0, float(np.max(np.abs(out))) / 0.95)).astype(np.float32)


def video_with_sound(path: Path, audio_16k: np.ndarray, fps: float = 25.0, size=(320, 240)) -> Path:
    """A plain moving-gradient video carrying the given 16 kHz sound (resampled to the encoder's rate)."""
    seconds = len(audio_16k) / SR
    n = int(round(seconds * fps))
    w, h = size
    xx = np.arange(w)[None, :].repeat(h, 0)

    def frames():
        for i in range(n):
            img = np.zeros((h, w, 3), np.uint8)
            img[..., 0] = (xx + 4 * i) % 256
            img[..., 1] = 120
            yield img

    t_out = np.arange(int(seconds * AUDIO_RATE)) / AUDIO_RATE
    audio = np.interp(t_out, np.arange(len(audio_16k)) / SR, audio_16k).astype(np.float32)
    return write_video(path, frames(), fps=fps, audio=audio)


def beeps(seconds: float = 8.0, hz: float = 1000.0, on_s: float = 0.25, period_s: float = 0.75) -> np.ndarray:
    """An alarm / reversing signal: a pure tone switched on and off at a steady rate (not music)."""
    t = _t(seconds)
    gate = (t % period_s) < on_s
    return (0.3 * np.sin(2 * np.pi * hz * t) * gate).astype(np.float32)


def ticking(seconds: float = 8.0, period_s: float = 0.5) -> np.ndarray:
    """A clock: short damped clicks at a steady rate (not music)."""
    rng = np.random.default_rng(11)
    out = np.zeros(int(seconds * SR), np.float32)
    click = (0.4 * rng.standard_normal(int(0.01 * SR)) * np.exp(-_t(0.01) * 600)).astype(np.float32)
    click += (0.3 * np.sin(2 * np.pi * 3000 * _t(0.01)) * np.exp(-_t(0.01) * 400)).astype(np.float32)
    for start in range(0, len(out) - len(click), int(period_s * SR)):
        out[start : start + len(click)] += click
    return out


def siren(seconds: float = 8.0, low_hz: float = 600.0, high_hz: float = 1200.0, sweep_s: float = 2.0) -> np.ndarray:
    """An emergency siren: a tone sweeping up and down (not music)."""
    t = _t(seconds)
    f = low_hz + (high_hz - low_hz) * 0.5 * (1 - np.cos(2 * np.pi * t / sweep_s))
    return (0.3 * np.sin(2 * np.pi * np.cumsum(f) / SR)).astype(np.float32)


def hum(seconds: float = 8.0, hz: float = 50.0) -> np.ndarray:
    """Mains hum: 50 Hz with odd harmonics (not music)."""
    t = _t(seconds)
    return (sum(0.1 / k * np.sin(2 * np.pi * hz * k * t) for k in (1, 3, 5, 7))).astype(np.float32)


def babble_noise(seconds: float = 8.0) -> np.ndarray:
    """Pink-ish noise (white noise through a one-pole low-pass): a room / traffic background."""
    from scipy.signal import lfilter

    y = lfilter([0.03], [1.0, -0.97], np.random.default_rng(5).standard_normal(int(seconds * SR)))
    return (0.3 * y / np.max(np.abs(y))).astype(np.float32)
