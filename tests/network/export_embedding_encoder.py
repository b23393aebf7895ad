"""Exports a BERT-like encoder input stage to ONNX for the network compiler's tests: token
embeddings (nn.Embedding, vocabulary 50, width 32: a Gather of the int64 input_ids) plus learned
positions, then one PyTorch TransformerEncoderLayer (4 heads, feed-forward 64, batch_first)
whose key padding mask comes from the int64 attention_mask input (attention_mask == 0: Equal,
Expand, Where). Symbolic sequence length "seq", fixed seed. Run with Debian's /usr/bin/python3.

usage: export_embedding_encoder.py OUT.onnx OPSET
"""
import sys
import warnings

import torch


class EmbeddingEncoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = torch.nn.Embedding(50, 32)
        self.positions = torch.nn.Parameter(torch.randn(1, 16, 32) * 0.1)
        self.layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)

    def forward(self, input_ids, attention_mask):
        x = self.tokens(input_ids) + self.positions[:, : input_ids.shape[1]]
        return self.layer(x, src_key_padding_mask=attention_mask == 0)


def main():
    out, opset = sys.argv[1], int(sys.argv[2])
    torch.manual_seed(opset)
    model = EmbeddingEncoder().eval()
    ids = torch.randint(0, 50, (1, 8))
    mask = torch.ones(1, 8, dtype=torch.int64)
    mask[0, 6:] = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (ids, mask), out, opset_version=opset,
                          input_names=["input_ids", "attention_mask"], output_names=["y"],
                          dynamic_axes={"input_ids": {1: "seq"}, "attention_mask": {1: "seq"},
                                        "y": {1: "seq"}})


if __name__ == "__main__":
    main()
