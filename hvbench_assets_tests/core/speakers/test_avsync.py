import numpy as np

from hvbench_assets.core.media import SAMPLE_RATE
from hvbench_assets.core.speakers.avsync import loudness_per_frame, windowed_sync

FPS = 25.0


def syllables(n, seed):
    """A loudness-like signal with word-rate bursts (random, fixed seed)."""
    rng = np.random.default_rng(seed)
    x = np.convolve(rng.standard_normal(n), np.hanning(9), mode="same")
    return 20 * np.tanh(x)


def test_a_mouth_following_the_voice_with_a_small_lag_is_in_sync():
    n = 150
    voice = syllables(n, 0)
    mouth = np.roll(voice, -1) + np.random.default_rng(1).standard_normal(n) * 2  # sound 40 ms after the lips
    seen = np.ones(n, bool)
    assert np.nanmin(windowed_sync(mouth, voice, seen, FPS)) > 0.6
    other = syllables(n, 7)  # someone else's words
    assert np.nanmax(windowed_sync(other, voice, seen, FPS)) < 0.45


def test_frames_without_a_seen_face_are_left_out():
    n = 150
    voice = syllables(n, 0)
    mouth = voice.copy()
    mouth[60:90] = np.random.default_rng(3).standard_normal(30) * 50  # a hand over the mouth
    seen = np.ones(n, bool)
    seen[60:90] = False
    assert np.nanmin(windowed_sync(mouth, voice, seen, FPS)) > 0.8
    assert np.isnan(windowed_sync(mouth, voice, np.zeros(n, bool), FPS)).all()


def test_loudness_per_frame_reads_each_frames_own_audio():
    audio = np.zeros(SAMPLE_RATE, np.float32)
    audio[int(0.4 * SAMPLE_RATE) : int(0.48 * SAMPLE_RATE)] = 0.5  # frames 10 and 11 at 25 fps
    db = loudness_per_frame(audio, 25, FPS)
    assert set(np.nonzero(db > db.min() + 20)[0]) == {10, 11}
    assert db.min() == db.max() - 40  # silence is floored 40 dB below the loudest frame


def test_motion_and_opening_are_averaged_and_both_must_follow_the_voice():
    from hvbench_assets.core.speakers.avsync import OPENING_BANDS_HZ, OPENING_LAGS, Stream, windowed_av_sync

    n = 150
    voice = syllables(n, 0)
    noise = np.random.default_rng(1).standard_normal(n) * 2
    seen = np.ones(n, bool)
    in_sync = [Stream(voice + noise), Stream(np.roll(voice, -2) + noise, OPENING_BANDS_HZ, OPENING_LAGS)]
    assert np.nanmin(windowed_av_sync(in_sync, voice, seen, FPS)) > 0.6
    # an opening that mouths other words pulls a moving mouth down to the mean of the two
    half = [in_sync[0], Stream(syllables(n, 7), OPENING_BANDS_HZ, OPENING_LAGS)]
    parts = [windowed_av_sync([s], voice, seen, FPS) for s in half]
    assert np.allclose(windowed_av_sync(half, voice, seen, FPS), np.mean(parts, axis=0))
    assert np.nanmax(windowed_av_sync(half, voice, seen, FPS)) < np.nanmin(parts[0]) - 0.1
    other = [Stream(syllables(n, 8)), Stream(syllables(n, 9), OPENING_BANDS_HZ, OPENING_LAGS)]
    assert np.nanmax(windowed_av_sync(other, voice, seen, FPS)) < 0.3


def test_windowed_sync_is_one_stream_of_windowed_av_sync():
    from hvbench_assets.core.speakers.avsync import Stream, windowed_av_sync

    n = 200
    voice, mouth = syllables(n, 0), syllables(n, 3) + syllables(n, 0)
    seen = np.ones(n, bool)
    assert np.allclose(windowed_sync(mouth, voice, seen, FPS), windowed_av_sync([Stream(mouth)], voice, seen, FPS))
