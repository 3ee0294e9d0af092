import numpy as np
import pytest
import torch

from hvbench_assets.core.audio.weights import ModelUnavailable
from hvbench_assets.core.speakers.asd_runtime import LightAsdScorer
from hvbench_assets.core.speakers.light_asd import (
    build_network,
    load_weights,
    prepare_faces,
    score_with_network,
)
from hvbench_assets.core.speakers.mfcc import mfcc, mfcc_per_video_frame


def test_architecture_size_and_checkpoint_names():
    net = build_network()
    n_params = sum(p.numel() for n, p in net.named_parameters() if not n.startswith("lossV."))
    assert 0.95e6 < n_params < 1.1e6  # the paper's model has about 1.0 M parameters
    keys = set(net.state_dict())
    assert {"model.visualEncoder.block1.s_3.weight", "model.audioEncoder.block3.bn_last.running_var",
            "model.GRU.gru_forward.weight_ih_l0", "lossAV.FC.weight"} <= keys


@pytest.mark.parametrize("fps", [25.0, 30.0, 29.97, 12.0])
def test_one_score_per_frame_at_any_frame_rate(fps):
    torch.manual_seed(0)
    net = build_network().eval()
    n = 40
    faces = prepare_faces([np.full((160, 160, 3), 90 + i, np.uint8) for i in range(n)])
    audio = np.random.default_rng(0).standard_normal(int(n / fps * 16000)).astype(np.float32) * 0.1
    scores = score_with_network(net, faces, audio, fps, window_s=(1.0, 2.0))
    assert scores.shape == (n,) and np.isfinite(scores).all()


def test_audio_rows_follow_the_real_frame_rate():
    # a loud burst from 1.00 s to 1.20 s: at 30 fps it lies under frames 30-35, at 25 fps under 25-29
    audio = np.zeros(3 * 16000, np.float32)
    audio[16000:19200] = 0.5 * np.sin(np.arange(3200) * 0.3)
    for fps, frames in ((30.0, range(30, 36)), (25.0, range(25, 30))):
        feats = mfcc_per_video_frame(audio, int(3 * fps), fps)
        assert feats.shape == (4 * int(3 * fps), 13)
        energy_per_frame = feats[:, 0].reshape(-1, 4).mean(axis=1)
        loud = set(np.nonzero(energy_per_frame > energy_per_frame.min() + 5)[0])
        assert set(frames) <= loud and loud <= set(range(frames.start - 1, frames.stop + 1)), (fps, sorted(loud))


def test_mfcc_rate_and_shape():
    assert mfcc(np.zeros(16000, np.float32)).shape == (99, 13)


def test_weights_load_roundtrip_and_clear_errors(tmp_path):
    src = build_network()
    path = tmp_path / "asd.model"
    torch.save({f"module.{k}": v for k, v in src.state_dict().items()}, path)  # DataParallel-style names
    dst = build_network()
    load_weights(dst, path)
    assert torch.equal(dst.state_dict()["lossAV.FC.weight"], src.state_dict()["lossAV.FC.weight"])
    with pytest.raises(ModelUnavailable, match="pretrain_AVA_CVPR.model"):
        LightAsdScorer(weights_path=str(tmp_path / "missing.model")).load()
    torch.save({"something.else": torch.zeros(1)}, tmp_path / "bad.model")
    with pytest.raises(ModelUnavailable, match="not a Light-ASD checkpoint"):
        load_weights(build_network(), tmp_path / "bad.model")
