"""Light-ASD (Liao et al., CVPR 2023) re-implemented in torch from its published architecture, with
weight loading and inference at the clip's real frame rate. The scorers are in asd_runtime.py.

Visual encoder: three blocks of split spatial (1xkxk) / temporal (kx1x1) 3D convolutions with 3- and
5-wide branches, on 112x112 grayscale face crops. Audio encoder: the same idea in 2D on 13 MFCCs
(4 rows per video frame, time halved twice). Back-end: audio + visual features added, a forward
GRU and a backward GRU (GELU between), a linear layer whose class-1 logit is the per-frame score.
Parameter names follow the published checkpoint (`model.visualEncoder...`, `lossAV.FC...`).

The reference inference script derives the audio length from an assumed 25 fps, which misaligns
audio and video on other rates; here the MFCC rows are taken at each frame's real time."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hvbench_assets.core.audio.weights import ModelUnavailable
from hvbench_assets.core.speakers.mfcc import mfcc_per_video_frame

FACE_SIZE = 112


def build_network():
    """The Light-ASD module tree (torch imported lazily: the default install runs the ONNX export instead)."""
    import torch
    from torch import nn

    def bn2(c):
        return nn.BatchNorm2d(c, momentum=0.01, eps=0.001)

    def bn3(c):
        return nn.BatchNorm3d(c, momentum=0.01, eps=0.001)

    class AudioBlock(nn.Module):
        def __init__(self, cin, cout):
            super().__init__()
            self.relu = nn.ReLU()
            self.m_3 = nn.Conv2d(cin, cout, (3, 1), padding=(1, 0), bias=False)
            self.bn_m_3 = bn2(cout)
            self.t_3 = nn.Conv2d(cout, cout, (1, 3), padding=(0, 1), bias=False)
            self.bn_t_3 = bn2(cout)
            self.m_5 = nn.Conv2d(cin, cout, (5, 1), padding=(2, 0), bias=False)
            self.bn_m_5 = bn2(cout)
            self.t_5 = nn.Conv2d(cout, cout, (1, 5), padding=(0, 2), bias=False)
            self.bn_t_5 = bn2(cout)
            self.last = nn.Conv2d(cout, cout, (1, 1), bias=False)
            self.bn_last = bn2(cout)

        def forward(self, x):
            x3 = self.relu(self.bn_t_3(self.t_3(self.relu(self.bn_m_3(self.m_3(x))))))
            x5 = self.relu(self.bn_t_5(self.t_5(self.relu(self.bn_m_5(self.m_5(x))))))
            return self.relu(self.bn_last(self.last(x3 + x5)))

    class VisualBlock(nn.Module):
        def __init__(self, cin, cout, is_down=False):
            super().__init__()
            self.relu = nn.ReLU()
            stride = (1, 2, 2) if is_down else (1, 1, 1)
            self.s_3 = nn.Conv3d(cin, cout, (1, 3, 3), stride=stride, padding=(0, 1, 1), bias=False)
            self.bn_s_3 = bn3(cout)
            self.t_3 = nn.Conv3d(cout, cout, (3, 1, 1), padding=(1, 0, 0), bias=False)
            self.bn_t_3 = bn3(cout)
            self.s_5 = nn.Conv3d(cin, cout, (1, 5, 5), stride=stride, padding=(0, 2, 2), bias=False)
            self.bn_s_5 = bn3(cout)
            self.t_5 = nn.Conv3d(cout, cout, (5, 1, 1), padding=(2, 0, 0), bias=False)
            self.bn_t_5 = bn3(cout)
            self.last = nn.Conv3d(cout, cout, (1, 1, 1), bias=False)
            self.bn_last = bn3(cout)

        def forward(self, x):
            x3 = self.relu(self.bn_t_3(self.t_3(self.relu(self.bn_s_3(self.s_3(x))))))
            x5 = self.relu(self.bn_t_5(self.t_5(self.relu(self.bn_s_5(self.s_5(x))))))
            return self.relu(self.bn_last(self.last(x3 + x5)))

    class VisualEncoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.block1 = VisualBlock(1, 32, is_down=True)
            self.pool1 = nn.MaxPool3d((1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1))
            self.block2 = VisualBlock(32, 64)
            self.pool2 = nn.MaxPool3d((1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1))
            self.block3 = VisualBlock(64, 128)
            self.maxpool = nn.AdaptiveMaxPool2d((1, 1))

        def forward(self, x):  # B, 1, T, H, W
            x = self.block3(self.pool2(self.block2(self.pool1(self.block1(x)))))
            x = x.transpose(1, 2)
            b, t, c, h, w = x.shape
            return self.maxpool(x.reshape(b * t, c, h, w)).view(b, t, c)

    class AudioEncoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.block1 = AudioBlock(1, 32)
            self.pool1 = nn.MaxPool2d((1, 3), stride=(1, 2), padding=(0, 1))
            self.block2 = AudioBlock(32, 64)
            self.pool2 = nn.MaxPool2d((1, 3), stride=(1, 2), padding=(0, 1))
            self.block3 = AudioBlock(64, 128)

        def forward(self, x):  # B, 1, 13, 4T
            x = self.block3(self.pool2(self.block2(self.pool1(self.block1(x)))))
            return x.mean(dim=2).transpose(1, 2)  # B, T, 128

    class BGRU(nn.Module):
        def __init__(self, channel):
            super().__init__()
            self.gru_forward = nn.GRU(channel, channel, num_layers=1, bias=True, batch_first=True)
            self.gru_backward = nn.GRU(channel, channel, num_layers=1, bias=True, batch_first=True)
            self.gelu = nn.GELU()

        def forward(self, x):
            x = self.gelu(self.gru_forward(x)[0])
            x = torch.flip(self.gru_backward(torch.flip(x, dims=[1]))[0], dims=[1])
            return self.gelu(x)

    class ASDModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.visualEncoder = VisualEncoder()
            self.audioEncoder = AudioEncoder()
            self.GRU = BGRU(128)

        def encode(self, audio_mfcc, faces):  # (B, 4T, 13), (B, T, 112, 112) uint8-range -> B, T, 128
            v = self.visualEncoder(((faces / 255.0 - 0.4161) / 0.1688).unsqueeze(1))
            a = self.audioEncoder(audio_mfcc.unsqueeze(1).transpose(2, 3))
            return a + v

        def forward(self, audio_mfcc, faces):
            return self.GRU(self.encode(audio_mfcc, faces))  # B, T, 128

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.FC = nn.Linear(128, 2)

    class LightASD(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = ASDModel()
            self.lossAV = Head()  # the checkpoint keeps the classifier under this name
            self.lossV = Head()  # visual-only auxiliary head, unused at inference

        def forward(self, audio_mfcc, faces):
            return self.lossAV.FC(self.model(audio_mfcc, faces))[..., 1]  # B, T: class-1 logit

        # the two halves, run apart by the batched scorer (core/speakers/asd_batch.py): the encoders see
        # each frame's neighbours only within +-ENCODER_REACH frames, the GRU back-end the whole window
        def encode(self, audio_mfcc, faces):
            return self.model.encode(audio_mfcc, faces)

        def head(self, fused):  # B, T, 128 -> B, T
            return self.lossAV.FC(self.model.GRU(fused))[..., 1]

        # the visual encoder in stages (asd_batch.py re-encodes only the frames a window's edge changes): block i's
        # per-frame spatial convolutions, then its temporal ones (+-2 frames) with the pooling that follows
        def spatial(self, i: int, x):  # i = 1: faces (B, T, 112, 112) in 0-255; else (B, C, T, H, W)
            if i == 1:
                x = ((x / 255.0 - 0.4161) / 0.1688).unsqueeze(1)
            blk = getattr(self.model.visualEncoder, f"block{i}")
            return blk.relu(blk.bn_s_3(blk.s_3(x))), blk.relu(blk.bn_s_5(blk.s_5(x)))

        def temporal(self, i: int, s3, s5):  # -> the next block's input; i = 3: visual features (B, T, 128)
            enc, blk = self.model.visualEncoder, getattr(self.model.visualEncoder, f"block{i}")
            x = blk.relu(blk.bn_last(blk.last(blk.relu(blk.bn_t_3(blk.t_3(s3))) + blk.relu(blk.bn_t_5(blk.t_5(s5))))))
            if i < 3:
                return (enc.pool1 if i == 1 else enc.pool2)(x)
            x = x.transpose(1, 2)
            b, t, c, h, w = x.shape
            return enc.maxpool(x.reshape(b * t, c, h, w)).view(b, t, c)

        def full(self, faces):  # the whole visual encoder, also returning blocks 2 and 3's spatial outputs
            s2 = self.spatial(2, self.temporal(1, *self.spatial(1, faces)))
            s3 = self.spatial(3, self.temporal(2, *s2))
            return (self.temporal(3, *s3), *s2, *s3)

        def audio(self, audio_mfcc):  # (B, 4T, 13) -> (B, T, 128)
            return self.model.audioEncoder(audio_mfcc.unsqueeze(1).transpose(2, 3))

    return LightASD()


def load_weights(net, path: str | Path, name: str = "Light-ASD",
                 hint: str = ": point audio_models.light_asd_weights (env HVBENCH_LIGHT_ASD_WEIGHTS) at a "
                             "`pretrain_AVA_CVPR.model` checkpoint, or leave it empty for the shipped one") -> None:
    """Load a checkpoint of `name`'s network (plain or DataParallel-prefixed state dict); strict on shapes. The
    visual-only head (`lossV`), unused at inference, may be missing."""
    import torch

    path = Path(path) if path else None
    if path is None or not path.is_file():
        raise ModelUnavailable(f"{name} weights not found at {str(path) if path else '(no path configured)'}{hint}")
    state = torch.load(str(path), map_location="cpu", weights_only=True)
    state = state.get("state_dict", state) if isinstance(state, dict) else state
    state = {k.removeprefix("module."): v for k, v in state.items()}
    missing, unexpected = net.load_state_dict(state, strict=False)
    needed = [k for k in missing if not k.startswith("lossV.")]
    if needed or unexpected:
        raise ModelUnavailable(f"{path} is not a {name} checkpoint: missing {needed[:5]}, unexpected {unexpected[:5]}")


def prepare_faces(frames_bgr) -> np.ndarray:
    """Grayscale, resized to 224 and centre-cropped to 112 (the face region the model was trained on).
    Streams any iterable of frames and keeps 12.5 kB (uint8) per frame, not the 150 kB colour crop."""
    import cv2

    lo, hi = FACE_SIZE // 2, FACE_SIZE // 2 + FACE_SIZE
    out = [cv2.resize(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), (2 * FACE_SIZE, 2 * FACE_SIZE))[lo:hi, lo:hi]
           for img in frames_bgr]
    return np.stack(out) if out else np.zeros((0, FACE_SIZE, FACE_SIZE), np.uint8)


def score_with_network(net, faces: np.ndarray, audio: np.ndarray, fps: float,
                       window_s=(1.0,), device: str = "cpu") -> np.ndarray:
    """Per-frame scores (T,) for faces (T, 112, 112) and audio starting at frame 0, at `fps`: the reference's
    plain window loop, kept as the yardstick of the batched scorer (asd_batch.py) in tests and benchmarks."""
    import torch

    n = len(faces)
    if n == 0:
        return np.zeros(0, np.float32)
    feats = mfcc_per_video_frame(audio, n, fps)
    per_window = []
    with torch.no_grad():
        for seconds in window_s:
            win = max(1, int(round(seconds * fps)))
            out = np.zeros(n, np.float32)
            for a in range(0, n, win):
                b = min(n, a + win)
                x_a = torch.from_numpy(feats[4 * a : 4 * b]).unsqueeze(0).to(device)
                x_v = torch.from_numpy(faces[a:b]).float().unsqueeze(0).to(device)
                out[a:b] = net(x_a, x_v)[0].cpu().numpy()
            per_window.append(out)
    return np.round(np.mean(per_window, axis=0), 4).astype(np.float32)
