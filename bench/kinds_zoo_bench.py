#!/usr/bin/env python3
"""Kinds of models the other zoo benches lack, compiled untuned and checked against ONNX
Runtime: OCR recognisers (CRNN: a CNN over the text line, bidirectional LSTMs or GRUs over
its columns, LogSoftmax for CTC), a speech encoder (Conv1d + GRU) and an Elman RNN,
super-resolution (ESPCN's PixelShuffle, exported as DepthToSpace and, at opset 9, as a rank-6
Transpose), a CaffeNet-style CNN with LRN, a YOLOv4-style CNN with Mish, style transfer
(reflection padding, InstanceNorm, nearest upsampling), attention written with einsum, and
the backbones with feature pyramids of torchvision's detectors (Faster R-CNN, RetinaNet,
SSDlite).

Weights are random (no download). Per model: the opset, kiln's compile time, the largest error
over all outputs against ORT (relative to max |ORT output|), and the median latency of both
(`kiln run` and an ORT session, taking turns for --rounds rounds). A model kiln refuses gets a
row with kiln's one-line error.

  scripts/python-env.sh build
  nice ninja -C build -j2 kiln
  build/pyenv/bin/python bench/kinds_zoo_bench.py [--models crnn_lstm espcn ...] [--threads 2]

The exports are kept in --work (build/kinds_zoo) and reused.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_zoo_bench as hf  # noqa: E402  (export with named inputs, bench against ORT)
import zoo_bench as zb  # noqa: E402  (the options and the table)


def named(module, outputs):
    """module(input) with its outputs as a dict, as hf_zoo_bench's export reads models."""
    import torch

    class Named(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = module

        def forward(self, input):
            out = self.m(input)
            if isinstance(out, dict):
                return dict(out)
            if isinstance(out, torch.Tensor):
                out = (out,)
            return dict(zip(outputs, out))

    return Named()


def conv_bn_relu(cin, cout, k=3, act=None):
    import torch.nn as nn
    return nn.Sequential(nn.Conv2d(cin, cout, k, padding=k // 2, bias=False), nn.BatchNorm2d(cout),
                         act or nn.ReLU())


def crnn(rnn="lstm", classes=37, hidden=128):
    """CRNN (Shi et al.): 32-pixel-high text lines to per-column class log-probabilities."""
    import torch
    import torch.nn as nn

    class Crnn(nn.Module):
        def __init__(self):
            super().__init__()
            self.cnn = nn.Sequential(
                conv_bn_relu(1, 32), nn.MaxPool2d(2),           # 16 x 50
                conv_bn_relu(32, 64), nn.MaxPool2d(2),          # 8 x 25
                conv_bn_relu(64, 128), conv_bn_relu(128, 128),
                nn.MaxPool2d((2, 1)),                           # 4 x 25
                conv_bn_relu(128, 256), nn.MaxPool2d((4, 1)))   # 1 x 25
            cell = nn.LSTM if rnn == "lstm" else nn.GRU
            self.rnn = cell(256, hidden, num_layers=2, bidirectional=True,
                            batch_first=rnn == "gru")
            self.fc = nn.Linear(2 * hidden, classes)

        def forward(self, x):
            f = self.cnn(x).squeeze(2)                          # [N, C, W]
            f = f.permute(0, 2, 1) if rnn == "gru" else f.permute(2, 0, 1)
            y, _ = self.rnn(f)
            return torch.log_softmax(self.fc(y), dim=2)

    return named(Crnn(), ["log_probs"])


def speech_gru():
    """80 mel bins x 100 frames: two Conv1d, a bidirectional GRU, a linear layer."""
    import torch.nn as nn

    class Speech(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Sequential(nn.Conv1d(80, 128, 5, padding=2), nn.GELU(),
                                      nn.Conv1d(128, 128, 3, stride=2, padding=1), nn.GELU())
            self.gru = nn.GRU(128, 96, bidirectional=True, batch_first=True)
            self.out = nn.Linear(192, 30)

        def forward(self, x):
            y, _ = self.gru(self.conv(x).transpose(1, 2))
            return self.out(y)

    return named(Speech(), ["logits"])


def elman_rnn():
    import torch.nn as nn

    class Elman(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.RNN(40, 64, num_layers=2, nonlinearity="relu", batch_first=True)
            self.out = nn.Linear(64, 10)

        def forward(self, x):
            y, h = self.rnn(x)
            return self.out(y), h

    return named(Elman(), ["logits", "h"])


def espcn(scale=3):
    import torch.nn as nn
    net = nn.Sequential(nn.Conv2d(1, 64, 5, padding=2), nn.Tanh(),
                        nn.Conv2d(64, 32, 3, padding=1), nn.Tanh(),
                        nn.Conv2d(32, scale * scale, 3, padding=1), nn.PixelShuffle(scale))
    return named(net, ["hr"])


def caffenet_lrn():
    """AlexNet as the Caffe model zoo had it: LRN after the first two convolutions."""
    import torch.nn as nn
    net = nn.Sequential(
        nn.Conv2d(3, 96, 11, stride=4), nn.ReLU(), nn.MaxPool2d(3, 2), nn.LocalResponseNorm(5),
        nn.Conv2d(96, 256, 5, padding=2, groups=2), nn.ReLU(), nn.MaxPool2d(3, 2),
        nn.LocalResponseNorm(5), nn.Conv2d(256, 384, 3, padding=1), nn.ReLU(),
        nn.Conv2d(384, 384, 3, padding=1, groups=2), nn.ReLU(),
        nn.Conv2d(384, 256, 3, padding=1, groups=2), nn.ReLU(), nn.MaxPool2d(3, 2),
        nn.Flatten(), nn.Linear(256 * 6 * 6, 1000), nn.Softmax(dim=1))
    return named(net, ["prob"])


def mish_cnn():
    """A YOLOv4-style neck: conv-BN-Mish blocks, a cross-stage split, upsampling, a head."""
    import torch
    import torch.nn as nn

    class Mish(nn.Module):
        def forward(self, x):
            return x * torch.tanh(nn.functional.softplus(x))

    class Neck(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(conv_bn_relu(3, 32, 3, Mish()), nn.MaxPool2d(2),
                                      conv_bn_relu(32, 64, 3, Mish()), nn.MaxPool2d(2))
            self.a = conv_bn_relu(32, 32, 3, Mish())
            self.b = conv_bn_relu(64, 128, 3, Mish())
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.head = nn.Conv2d(128 + 64, 255, 1)

        def forward(self, x):
            x = self.stem(x)
            left, right = torch.split(x, 32, dim=1)
            y = torch.cat([left, self.a(right)], 1)
            deep = self.b(nn.functional.max_pool2d(y, 2))
            return self.head(torch.cat([self.up(deep), y], 1))

    return named(Neck(), ["head"])


def style_transfer():
    """Johnson et al.'s transformer network (fast neural style), at a quarter of its width."""
    import torch.nn as nn

    def conv(cin, cout, k, stride=1):
        return nn.Sequential(nn.ReflectionPad2d(k // 2), nn.Conv2d(cin, cout, k, stride))

    class Residual(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.body = nn.Sequential(conv(c, c, 3), nn.InstanceNorm2d(c, affine=True), nn.ReLU(),
                                      conv(c, c, 3), nn.InstanceNorm2d(c, affine=True))

        def forward(self, x):
            return x + self.body(x)

    net = nn.Sequential(
        conv(3, 8, 9), nn.InstanceNorm2d(8, affine=True), nn.ReLU(),
        conv(8, 16, 3, 2), nn.InstanceNorm2d(16, affine=True), nn.ReLU(),
        conv(16, 32, 3, 2), nn.InstanceNorm2d(32, affine=True), nn.ReLU(),
        Residual(32), Residual(32),
        nn.Upsample(scale_factor=2, mode="nearest"), conv(32, 16, 3),
        nn.InstanceNorm2d(16, affine=True), nn.ReLU(),
        nn.Upsample(scale_factor=2, mode="nearest"), conv(16, 8, 3),
        nn.InstanceNorm2d(8, affine=True), nn.ReLU(), conv(8, 3, 9))
    return named(net, ["styled"])


def einsum_attention():
    """Self-attention over image patches with the products written as einsum."""
    import torch
    import torch.nn as nn

    class Attention(nn.Module):
        def __init__(self, dim=96, heads=4):
            super().__init__()
            self.heads = heads
            self.patch = nn.Conv2d(3, dim, 16, 16)
            self.qkv = nn.Linear(dim, 3 * dim)
            self.proj = nn.Linear(dim, dim)
            self.norm = nn.LayerNorm(dim)

        def forward(self, x):
            t = self.patch(x).flatten(2).transpose(1, 2)            # [N, 196, dim]
            n, s, d = t.shape
            q, k, v = self.qkv(self.norm(t)).reshape(n, s, 3, self.heads, -1).unbind(2)
            a = torch.einsum("bqhd,bkhd->bhqk", q, k) * (d // self.heads) ** -0.5
            o = torch.einsum("bhqk,bkhd->bqhd", a.softmax(-1), v).reshape(n, s, d)
            return t + self.proj(o)

    return named(Attention(), ["tokens"])


def detector_backbone(builder):
    """A torchvision detector's backbone and feature pyramid: one output per level."""
    def make():
        return named(builder(weights=None, weights_backbone=None).backbone, [])
    return make


def image(size=224, channels=3, name="input"):
    return {name: np.random.RandomState(0).randn(1, channels, size, size).astype(np.float32)}


def zoo():
    """name -> (constructor, inputs, opset)."""
    import torchvision.models.detection as det
    line = {"input": np.random.RandomState(0).randn(1, 1, 32, 100).astype(np.float32)}
    return {
        "crnn_lstm": (lambda: crnn("lstm"), line, 11),
        "crnn_gru": (lambda: crnn("gru"), line, 14),
        "speech_gru": (speech_gru,
                       {"input": np.random.RandomState(0).randn(1, 80, 100).astype(np.float32)},
                       13),
        "elman_rnn": (elman_rnn,
                      {"input": np.random.RandomState(0).randn(1, 20, 40).astype(np.float32)}, 9),
        "espcn": (espcn, image(96, 1), 11),
        "espcn_opset9": (espcn, image(96, 1), 9),
        "caffenet_lrn": (caffenet_lrn, image(227), 9),
        "yolov4_mish": (mish_cnn, image(256), 11),
        "style_transfer": (style_transfer, image(256), 11),
        "einsum_attention": (einsum_attention, image(224), 13),
        "fasterrcnn_mbv3_fpn": (
            detector_backbone(det.fasterrcnn_mobilenet_v3_large_fpn), image(320), 13),
        "retinanet_r50_fpn": (detector_backbone(det.retinanet_resnet50_fpn), image(256), 11),
        "ssdlite_mbv3": (detector_backbone(det.ssdlite320_mobilenet_v3_large), image(320), 13),
    }


def main():
    args = zb.zoo_args(__doc__.splitlines()[0], "kinds_zoo").parse_args()
    zb.print_table(args, zoo(), hf.bench, "kinds_zoo_bench")


if __name__ == "__main__":
    main()
