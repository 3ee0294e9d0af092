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


def test_voice_envelopes_read_each_band_in_each_frames_own_audio():
    from hvbench_assets.core.speakers.avsync import voice_envelopes

    t = np.arange(SAMPLE_RATE) / SAMPLE_RATE
    audio = np.zeros(SAMPLE_RATE, np.float32)
    low = (t >= 0.4) & (t < 0.48)  # frames 10 and 11 at 25 fps: a 1.5 kHz tone
    high = (t >= 0.8) & (t < 0.88)  # frames 20 and 21: a 5 kHz tone
    audio[low] = 0.5 * np.sin(2 * np.pi * 1500 * t[low])
    audio[high] = 0.5 * np.sin(2 * np.pi * 5000 * t[high])
    env = voice_envelopes(audio, 25, FPS)
    assert env.shape == (2, 25)
    assert set(np.nonzero(env[0] > env[0].min() + 20)[0]) == {10, 11}
    assert set(np.nonzero(env[1] > env[1].min() + 20)[0]) == {20, 21}
    assert (env.max(axis=1) - env.min(axis=1) == 40).all()  # each band floored 40 dB below its loudest frame
    assert voice_envelopes(audio, 0, FPS).shape == (2, 0)


def test_all_windows_at_once_equal_the_plain_best_lag_correlation():
    """`_window_corrs` (running sums) against `best_lag_corr` (one masked np.corrcoef per lag) window by window,
    with unseen frames, lags past the ends, too few seen frames and a flat signal."""
    from hvbench_assets.core.speakers.avsync import LAGS, _window_corrs, best_lag_corr

    rng = np.random.default_rng(5)
    n, win = 300, 100
    v, e = syllables(n, 1) + rng.standard_normal(n), syllables(n, 2)
    seen = rng.random(n) > 0.3
    seen[200:260] = False  # a window with too few seen frames
    starts = np.array([0, 13, 100, 170, 200])
    for signal in (v, np.ones(n)):
        fast = _window_corrs(signal, e, seen, starts, win, LAGS, 50)
        for s, c in zip(starts, fast):
            mask = np.zeros(n, bool)
            mask[s : s + win] = seen[s : s + win]
            ref = best_lag_corr(signal, e, mask, LAGS, 50)
            assert (np.isnan(c) and np.isnan(ref)) or abs(c - ref) < 1e-9
    assert np.isnan(fast[-1])


def test_several_voices_at_once_equal_one_voice_at_a_time():
    """The chance level scores one mouth against its voice at two dozen shifts in one call: each voice's result
    is bit for bit the one-voice call's, with unseen frames and both mouth streams."""
    from hvbench_assets.core.speakers.avsync import mouth_streams, windowed_av_sync

    rng = np.random.default_rng(7)
    n = 230
    motion, opening = np.abs(syllables(n, 3)) / 20, syllables(n, 4) / 40
    opening[40:55] = np.nan
    seen = np.isfinite(opening) & (rng.random(n) > 0.1)
    voice = np.stack([syllables(n, 5), syllables(n, 6)])  # two envelopes, as voice_envelopes gives
    shifted = np.stack([np.roll(voice, k, axis=-1) for k in (25, 60, 111, 180)])
    for stream in mouth_streams(motion, opening):
        together = windowed_av_sync([stream], shifted, seen, FPS)
        assert together.shape == (4, n)
        for one, v in zip(together, shifted):
            np.testing.assert_array_equal(one, windowed_av_sync([stream], v, seen, FPS))


def test_the_mans_lips_follow_his_voice_above_1_khz_better_than_its_loudness(man_talking_head):
    """Measured on the real talking head (benchmarks/speaker_sync.py): his mouth's synchrony with the voice's
    1-3 and 3-7 kHz envelopes is about 0.55, with its wideband loudness about 0.38; chance is about 0.15."""
    import cv2

    from hvbench_assets.core.media import iter_frames, load_audio
    from hvbench_assets.core.speakers.avsync import mouth_streams, voice_envelopes, windowed_av_sync
    from hvbench_assets.core.speakers.lips import mouth_signals

    frames = [cv2.resize(f.image, (224, 224), interpolation=cv2.INTER_AREA) for f in iter_frames(man_talking_head)]
    sig = mouth_signals(frames)
    audio, n = load_audio(man_talking_head), len(frames)
    streams, seen = mouth_streams(sig.motion, sig.opening), sig.seen & np.isfinite(sig.opening)
    bands = np.nanmax(windowed_av_sync(streams, voice_envelopes(audio, n, FPS), seen, FPS))
    loudness = np.nanmax(windowed_av_sync(streams, loudness_per_frame(audio, n, FPS), seen, FPS))
    assert bands > 0.45 and bands > loudness + 0.1, (bands, loudness)
