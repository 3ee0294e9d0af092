"""LR-ASD (Liao et al., IJCV 2025: Light-ASD's author, a lighter and more robust successor) re-implemented in torch
from its published architecture, for L7's second network. Same inputs as Light-ASD (112x112 grayscale crops, 13
MFCCs at 4 rows per video frame), different network, so its mistakes need not be Light-ASD's.

Visual encoder: three blocks of sequential spatial (1x5x5 then 1x3x3) and temporal (5x1x1 then 3x1x1) 3D
convolutions; audio encoder: the same in 2D on the MFCCs. Back-end: audio and visual features concatenated (256),
re-weighted by a sigmoid attention (1x1 convolution + batch norm), a forward and a backward GRU (64 each), the two
concatenated and re-weighted again, a linear layer whose class-1 logit is the per-frame score. Parameter names
follow the published checkpoint (`model.visualEncoder...`, `lossAV.FC...`)."""

from __future__ import annotations

from pathlib import Path

REACH = 9  # frames either side a frame's encoding depends on: three blocks of 5- then 3-wide temporal convolutions


def build_network():
    """The LR-ASD module tree (torch imported lazily: the default install runs the ONNX export instead)."""
    import torch
    from torch import nn

    def bn(dim, c):
        return (nn.BatchNorm2d if dim == 2 else nn.BatchNorm3d)(c, momentum=0.01, eps=0.001)

    class Block(nn.Module):
        """Two 'spatial' convolutions (k1 then k2 wide), then two temporal ones; audio: dim 2, video: dim 3."""

        def __init__(self, dim, cin, cout, down=False):
            super().__init__()
            conv = nn.Conv2d if dim == 2 else nn.Conv3d
            self.relu = nn.ReLU()
            if dim == 2:  # audio (B, C, 13, 4T): 'spatial' along the MFCCs, temporal along time
                k = lambda s: ((s, 1), ((s - 1) // 2, 0))  # noqa: E731
                t = lambda s: ((1, s), (0, (s - 1) // 2))  # noqa: E731
                stride = 1
            else:  # video (B, C, T, H, W)
                k = lambda s: ((1, s, s), (0, (s - 1) // 2, (s - 1) // 2))  # noqa: E731
                t = lambda s: ((s, 1, 1), ((s - 1) // 2, 0, 0))  # noqa: E731
                stride = (1, 2, 2) if down else 1
            first = "m" if dim == 2 else "s"
            setattr(self, f"{first}_1", conv(cin, cout // 2, k(5)[0], stride=stride, padding=k(5)[1], bias=False))
            setattr(self, f"{first}_norm_1", bn(dim, cout // 2))
            setattr(self, f"{first}_2", conv(cout // 2, cout, k(3)[0], padding=k(3)[1], bias=False))
            setattr(self, f"{first}_norm_2", bn(dim, cout))
            self.t_1 = conv(cout, cout, t(5)[0], padding=t(5)[1], bias=False)
            self.t_norm_1 = bn(dim, cout)
            self.t_2 = conv(cout, cout, t(3)[0], padding=t(3)[1], bias=False)
            self.t_norm_2 = bn(dim, cout)
            self._first = first

        def forward(self, x):
            f = self._first
            x = self.relu(getattr(self, f"{f}_norm_1")(getattr(self, f"{f}_1")(x)))
            x = self.relu(getattr(self, f"{f}_norm_2")(getattr(self, f"{f}_2")(x)))
            x = self.relu(self.t_norm_1(self.t_1(x)))
            return self.relu(self.t_norm_2(self.t_2(x)))

    class VisualEncoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.block1 = Block(3, 1, 32, down=True)
            self.pool1 = nn.MaxPool3d((1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1))
            self.block2 = Block(3, 32, 64)
            self.pool2 = nn.MaxPool3d((1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1))
            self.block3 = Block(3, 64, 128)
            self.maxpool = nn.AdaptiveMaxPool2d((1, 1))

        def forward(self, x):  # B, 1, T, H, W
            x = self.block3(self.pool2(self.block2(self.pool1(self.block1(x))))).transpose(1, 2)
            b, t, c, h, w = x.shape
            return self.maxpool(x.reshape(b * t, c, h, w)).view(b, t, c)

    class AudioEncoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.block1 = Block(2, 1, 32)
            self.pool1 = nn.MaxPool2d((1, 3), stride=(1, 2), padding=(0, 1))
            self.block2 = Block(2, 32, 64)
            self.pool2 = nn.MaxPool2d((1, 3), stride=(1, 2), padding=(0, 1))
            self.block3 = Block(2, 64, 128)

        def forward(self, x):  # B, 1, 13, 4T
            return self.block3(self.pool2(self.block2(self.pool1(self.block1(x))))).mean(dim=2).transpose(1, 2)

    class Fusion(nn.Module):
        def __init__(self, channel):
            super().__init__()
            self.attention = nn.Conv1d(channel, channel, kernel_size=1, bias=False)
            self.bn = nn.BatchNorm1d(channel, momentum=0.01, eps=0.001)

        def forward(self, x1, x2):  # (B, T, C/2) x 2 -> (B, T, C)
            x = torch.cat((x1, x2), 2).transpose(1, 2)
            return (x * torch.sigmoid(self.bn(self.attention(x)))).transpose(1, 2)

    class Detector(nn.Module):
        def __init__(self, channel):
            super().__init__()
            self.gru_forward = nn.GRU(channel, channel // 4, num_layers=1, bias=True, batch_first=True)
            self.gru_backward = nn.GRU(channel, channel // 4, num_layers=1, bias=True, batch_first=True)
            self.attention = Fusion(channel // 2)

        def forward(self, x):
            x1 = self.gru_forward(x)[0]
            x2 = torch.flip(self.gru_backward(torch.flip(x, dims=[1]))[0], dims=[1])
            return self.attention(x1, x2)

    class ASDModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.visualEncoder = VisualEncoder()
            self.audioEncoder = AudioEncoder()
            self.fusion = Fusion(256)
            self.detector = Detector(256)

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.FC = nn.Linear(128, 2)

    class LRASD(nn.Module):
        reach = REACH

        def __init__(self):
            super().__init__()
            self.model = ASDModel()
            self.lossAV = Head()  # the checkpoint keeps the classifier under this name
            self.lossV = Head()  # visual-only auxiliary head, unused at inference

        def visual(self, faces):  # (B, T, 112, 112) in 0-255 -> (B, T, 128)
            return self.model.visualEncoder(((faces / 255.0 - 0.4161) / 0.1688).unsqueeze(1))

        def audio(self, audio_mfcc):  # (B, 4T, 13) -> (B, T, 128)
            return self.model.audioEncoder(audio_mfcc.unsqueeze(1).transpose(2, 3))

        def encode(self, audio_mfcc, faces):  # -> (B, T, 256): the two encodings side by side
            return torch.cat((self.audio(audio_mfcc), self.visual(faces)), 2)

        def head(self, encoded):  # (B, T, 256) -> (B, T): class-1 logit
            a, v = encoded[..., :128], encoded[..., 128:]
            return self.lossAV.FC(self.model.detector(self.model.fusion(a, v)))[..., 1]

        def forward(self, audio_mfcc, faces):
            return self.head(self.encode(audio_mfcc, faces))

    return LRASD()


def load_weights(net, path: str | Path) -> None:
    """Load an LR-ASD checkpoint (light_asd.load_weights' rules: strict on shapes, `lossV` may be missing)."""
    from hvbench_assets.core.speakers.light_asd import load_weights as load_checkpoint

    load_checkpoint(net, path, "LR-ASD", hint="")
