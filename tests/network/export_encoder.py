"""Exports one PyTorch transformer encoder layer (self-attention + feed-forward) to ONNX for
the network compiler's tests: d_model 32, 4 heads, feed-forward 64, batch_first, a symbolic
sequence length "seq", fixed seed. Run with Debian's /usr/bin/python3 (python3-torch).

usage: export_encoder.py OUT.onnx OPSET ACTIVATION(relu|gelu)
"""
import sys
import warnings

import torch


def main():
    out, opset, activation = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    torch.manual_seed(opset)
    layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                             dropout=0.0, activation=activation,
                                             batch_first=True).eval()
    x = torch.randn(1, 8, 32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(layer, (x,), out, opset_version=opset, input_names=["x"],
                          output_names=["y"], dynamic_axes={"x": {1: "seq"}, "y": {1: "seq"}})


if __name__ == "__main__":
    main()
