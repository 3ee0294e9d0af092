"""Light-ASD on the shipped weights: the ONNX export agrees with torch, the batched multi-window scores equal
the plain window loop, and the device choice reaches model and inputs. Real face crops (L1) of a shared clip."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import numpy as np
import pytest
import torch

from hvbench_assets.core.media import load_audio
from hvbench_assets.core.speakers import asd_runtime
from hvbench_assets.core.speakers.asd_batch import multi_window_scores, window_plan
from hvbench_assets.core.speakers.asd_runtime import LightAsdScorer, OnnxLightAsdScorer
from hvbench_assets.core.speakers.light_asd import prepare_faces, score_with_network
from hvbench_assets.core.speakers.mfcc import mfcc_per_video_frame
from hvbench_assets.core.speakers.scoring import track_audio
from hvbench_assets_tests.conftest import shared_clip
from hvbench_assets_tests.core.speakers.face_crops import face_crop_tracks


@pytest.fixture(scope="module")
def man_track(tmp_path_factory):
    """The man's L1 face crops (first 3 s, to keep the plain loop short) and his audio."""
    path = shared_clip("man_talking_head.mp4")
    tracks, fps = face_crop_tracks(path, tmp_path_factory.mktemp("asd_crops"))
    t = tracks[0]
    faces = prepare_faces(t.frames[: int(3 * fps)])
    return faces, track_audio(load_audio(path), t.first_frame, len(faces), fps), fps


def test_window_plan_counts_each_distinct_length_once():
    assert window_plan((1, 1, 1, 2, 2, 2, 3, 3, 4, 5, 6), 25.0) == [(25, 3), (50, 3), (75, 2), (100, 1), (125, 1), (150, 1)]
    assert window_plan((1, 1.02), 25.0) == [(25, 1), (26, 1)]


def test_onnx_matches_torch_on_real_face_crops(man_track):
    faces, audio, fps = man_track
    torch_net = LightAsdScorer(device="cpu").load()
    onnx_net = OnnxLightAsdScorer(device="cpu").load()
    feats = mfcc_per_video_frame(audio, len(faces), fps)[None, : 4 * 50]
    crops = faces[None, :50].astype(np.float32)
    fused_t, fused_o = torch_net.encode(feats, crops), onnx_net.encode(feats, crops)
    assert np.abs(fused_t - fused_o).max() <= 1e-4 * max(1.0, np.abs(fused_t).max())
    logit_t, logit_o = torch_net.head(fused_t), onnx_net.head(fused_t)
    assert np.abs(logit_t - logit_o).max() <= 1e-4
    # end to end: the full network in torch against both ONNX halves
    with torch.no_grad():
        ref = torch_net.net(torch.from_numpy(feats), torch.from_numpy(crops)).numpy()
    assert np.abs(onnx_net.head(fused_o) - ref).max() <= 1e-4


def test_batched_windows_equal_the_plain_loop(man_track):
    faces, audio, fps = man_track
    windows = (1, 1, 2, 2.5)
    scorer = LightAsdScorer(device="cpu", window_s=windows)
    old = score_with_network(scorer.load().net, faces, audio, fps, windows)
    new = scorer.score_prepared([(faces, audio)], fps)[0]
    assert np.abs(old - new).max() <= 1e-3
    assert (old > 0).any() and (old < 0).any()  # a real speaker's scores, not a flat line
    # tracks batched together give each track's own scores; ONNX agrees with torch
    short = (faces[:31], audio[: int(31 / fps * 16000)])
    both = OnnxLightAsdScorer(window_s=windows).score_prepared([(faces, audio), short], fps)
    assert np.abs(both[0] - new).max() <= 1e-3
    assert np.abs(both[1] - scorer.score_prepared([short], fps)[0]).max() <= 1e-3



class _Halves:
    """A net with only the two halves: asd_batch re-encodes each window edge from a 12-frame patch."""

    def __init__(self, net):
        self.encode, self.head = net.encode, net.head


def test_staged_edges_equal_the_patched_windows(man_track):
    """The staged encoder (asd_stages.py: only what a window's edge changes, from the whole pass's block outputs)
    gives the windows the patched path gives, on the reference's 11 windows (edges every second), a track of 3 s,
    one of 31 frames (its last windows shorter than 12 frames) and one of 9, in torch and in onnxruntime."""
    faces, audio, fps = man_track
    tracks = [(faces, audio), (faces[:31], audio[: int(31 / fps * 16000)]), (faces[40:49], audio[int(40 / fps * 16000):])]
    for scorer in (LightAsdScorer(device="cpu"), OnnxLightAsdScorer(device="cpu")):
        net = scorer.load()
        assert hasattr(net, "full")
        items = [(f, mfcc_per_video_frame(a, len(f), fps)) for f, a in tracks]
        staged = multi_window_scores(net, items, fps, scorer.window_s)
        patched = multi_window_scores(_Halves(net), items, fps, scorer.window_s)
        for s_, p_ in zip(staged, patched):
            assert s_.shape == p_.shape and np.abs(s_ - p_).max() <= 1e-4, np.abs(s_ - p_).max()
        assert (staged[0] > 0).any() and (staged[0] < 0).any()

class _Recorder:
    """Stands in for the torch network: records the device of every input it is given."""

    def __init__(self):
        self.devices = []
        self.moved_to = None

    def to(self, device):
        self.moved_to = device
        return self

    def eval(self):
        return self

    def encode(self, *xs):
        self.devices += [str(x.device) for x in xs]
        return torch.zeros(xs[1].shape[0], xs[1].shape[1], 128)

    def head(self, x):
        self.devices.append(str(x.device))
        return torch.zeros(x.shape[:2])


def test_cuda_choice_reaches_model_and_inputs():
    assert asd_runtime.torch_device("cpu") == "cpu"
    with mock.patch.object(torch.cuda, "is_available", return_value=False):
        assert asd_runtime.torch_device("auto") == "cpu"
    with mock.patch.object(torch.cuda, "is_available", return_value=True), \
            mock.patch.object(torch.cuda, "device_count", return_value=1):
        assert asd_runtime.torch_device("auto") == "cuda:0"
        rec = _Recorder()
        with mock.patch.object(asd_runtime, "build_network", return_value=rec), \
                mock.patch.object(asd_runtime, "load_weights"), \
                mock.patch.object(torch.Tensor, "to", lambda self, device: _on(self, device)):
            scorer = LightAsdScorer()
            scorer.score_prepared([(np.zeros((30, 112, 112), np.uint8), np.zeros(19200, np.float32))], 25.0)
        assert rec.moved_to == "cuda:0" and scorer.resolved_device == "cuda:0"
        assert rec.devices and all(d.startswith("cuda") for d in rec.devices)
        assert "torch on cuda:0" in scorer.model


class _FakeCudaTensor(torch.Tensor):
    @property
    def device(self):
        return torch.device("cuda")


def _on(t, device):
    """Tensor.to without a GPU: keeps the data on the CPU but marks it as moved to `device`."""
    return t.as_subclass(_FakeCudaTensor) if str(device).startswith("cuda") else t


def test_default_install_scores_without_torch():
    """The offline profile's Light-ASD runs on onnxruntime alone: torch made unimportable in a fresh process."""
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import numpy as np\n"
        "from hvbench_assets.core.audio.backends import AudioBackendConfig\n"
        "from hvbench_assets.core.speakers.methods import build_scorer\n"
        "s = build_scorer(AudioBackendConfig())\n"
        "faces, audio = np.full((30, 112, 112), 100, np.uint8), np.zeros(19200, np.float32)\n"
        "scores = s.scorer.asd.score_prepared([(faces, audio)], 25.0)[0]\n"
        "assert s.method == 'verified' and s.method_note is None and 'onnxruntime on cpu' in s.model, s.model\n"
        "assert scores.shape == (30,) and np.isfinite(scores).all()\n"
    )
    root = Path(__file__).resolve().parents[3]  # this checkout's package, as pytest imports it
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=root)
    assert done.returncode == 0, done.stderr[-2000:]


def test_lr_asd_batched_windows_equal_the_plain_loop(man_track):
    """LR-ASD's network (seeded weights: the published checkpoint is not shipped) through asd_batch: the wider reach
    (9 frames) and the split encoders (faces encoded once for every lag) give the plain loop's scores."""
    from hvbench_assets.core.speakers.asd_batch import lagged_window_scores
    from hvbench_assets.core.speakers.lr_asd import REACH, build_network as build_lr

    faces, audio, fps = man_track
    torch.manual_seed(0)
    net = build_lr().eval()
    windows, lags = (1, 2, 2.5), (0, -12, 12)
    split = asd_runtime.TorchAsdNet(net, "cpu")
    assert split.reach == REACH and hasattr(split, "join")
    mfcc = mfcc_per_video_frame(audio, len(faces), fps)
    got = lagged_window_scores(split, [(faces, mfcc)], fps, windows, lags)[0]
    old = score_with_network(net, faces, audio, fps, windows)
    assert np.abs(got[0] - old).max() <= 1e-3
    joined = _Halves(split)
    joined.reach = REACH
    ref = lagged_window_scores(joined, [(faces, mfcc)], fps, windows, lags)[0]
    assert np.abs(got - ref).max() <= 1e-3 and np.abs(got[1] - got[0]).max() > 0  # a lag reaches the scores


def test_lr_asd_refuses_a_light_asd_checkpoint():
    from hvbench_assets.core.audio.weights import ModelUnavailable
    from hvbench_assets.core.published_weights import weight_path
    from hvbench_assets.core.speakers.lr_asd import build_network as build_lr, load_weights as load_lr

    with pytest.raises(ModelUnavailable, match="not a LR-ASD checkpoint"):
        load_lr(build_lr(), weight_path("light_asd"))
    with pytest.raises(ModelUnavailable, match="not found"):
        asd_runtime.LrAsdScorer(weights_path="/nonexistent/lr.model").load()
