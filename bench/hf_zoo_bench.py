#!/usr/bin/env python3
"""Hugging Face models kiln's tests do not name, compiled untuned and checked against ONNX
Runtime: text encoders and decoders (BERT, RoBERTa, GPT-2, T5, DeBERTa, LayoutLM, CLIP text),
vision transformers and CNNs (ViT, DeiT, BEiT, Swin, LeViT, MobileViT, SegFormer, ConvNeXt),
detection (DETR, YOLOS) and audio (Whisper's encoder, wav2vec2); and a second sweep of 26
(more_models): decoders (Llama, Mistral, Phi, GPT-NeoX, BLOOM, OPT), BART, more encoders,
DINOv2, ConvNeXt-V2, PVT, RegNet, BiT, depth estimation (GLPN, DPT), HuBERT, WavLM, AST and
Conditional DETR.

Weights are random (no download) and the configurations small (2 layers, hidden 128 for the
text models), so each export takes seconds; the operators and the patterns between them are
the real models'. Text models take int64 token ids and masks with a symbolic batch and
sequence length, bound at compile time (--input-shape batch=1 --input-shape seq=16). Per
model: the opset, kiln's compile time, the largest error over all outputs against ORT
(relative to max |ORT output|), and the median latency of both (`kiln run` and an ORT session,
taking turns for --rounds rounds). A model kiln refuses gets a row with kiln's one-line error.

  scripts/python-env.sh build
  build/pyenv/bin/pip install transformers==4.36.2   # the last release for this torch (1.13)
  nice ninja -C build -j2 kiln
  build/pyenv/bin/python bench/hf_zoo_bench.py [--models bert t5_encoder ...] [--threads 2]

The exports are kept in --work (build/hf_zoo) and reused.
"""
import os
import re
import statistics
import subprocess
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import network_bench as nb  # noqa: E402  (the paths and subprocess helper, not copied)
import zoo_bench as zb  # noqa: E402  (the options and the table)

SEQ = 16


def text(vocab, types=False):
    """input_ids (and attention_mask, token_type_ids) for SEQ tokens, the last 3 padding."""
    rs = np.random.RandomState(0)
    d = {"input_ids": rs.randint(1, vocab, size=(1, SEQ)).astype(np.int64)}
    mask = np.ones((1, SEQ), np.int64)
    mask[0, -3:] = 0
    d["attention_mask"] = mask
    if types:
        d["token_type_ids"] = (np.arange(SEQ) >= SEQ // 2).astype(np.int64)[None]
    return d


def image(size=224, name="pixel_values"):
    return {name: np.random.RandomState(0).randn(1, 3, size, size).astype(np.float32)}


def layout():
    d = text(30522)
    boxes = np.sort(np.random.RandomState(1).randint(0, 1000, size=(1, SEQ, 4)), axis=-1)
    d["bbox"] = boxes.astype(np.int64)
    return d


def zoo():
    """name -> (constructor, inputs, opset)."""
    import transformers as T
    small = dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                 intermediate_size=256)
    clip = dict(hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                num_attention_heads=4)
    detr_backbone = T.ResNetConfig(depths=[1, 1, 1, 1], hidden_sizes=[64, 128, 256, 512],
                                   layer_type="basic")
    whisper = T.WhisperConfig(d_model=128, encoder_layers=2, decoder_layers=1,
                              encoder_attention_heads=4, decoder_attention_heads=4,
                              encoder_ffn_dim=256, decoder_ffn_dim=256,
                              max_source_positions=100, num_mel_bins=80)
    return {
        "bert": (lambda: T.BertModel(T.BertConfig(**small)), text(30522, True), 14),
        "distilbert": (lambda: T.DistilBertModel(T.DistilBertConfig(
            dim=128, n_layers=2, n_heads=4, hidden_dim=256)), text(30522), 13),
        "roberta": (lambda: T.RobertaModel(T.RobertaConfig(**small)), text(50265), 12),
        "albert": (lambda: T.AlbertModel(T.AlbertConfig(embedding_size=64, **small)),
                   text(30000, True), 11),
        "electra": (lambda: T.ElectraModel(T.ElectraConfig(embedding_size=64, **small)),
                    text(30522), 15),
        "gpt2": (lambda: T.GPT2Model(T.GPT2Config(n_embd=128, n_layer=2, n_head=4,
                                                  use_cache=False)), text(50257), 13),
        "t5_encoder": (lambda: T.T5EncoderModel(T.T5Config(
            d_model=128, d_kv=32, d_ff=256, num_layers=2, num_heads=4)), text(32128), 13),
        "deberta_v2": (lambda: T.DebertaV2Model(T.DebertaV2Config(**small)), text(128100), 13),
        "layoutlm": (lambda: T.LayoutLMModel(T.LayoutLMConfig(**small)), layout(), 13),
        "clip_text": (lambda: T.CLIPTextModel(T.CLIPTextConfig(**clip)), text(49408), 14),
        "clip_vision": (lambda: T.CLIPVisionModel(T.CLIPVisionConfig(**clip)), image(), 14),
        "vit": (lambda: T.ViTModel(T.ViTConfig(**small)), image(), 12),
        "deit": (lambda: T.DeiTModel(T.DeiTConfig(**small)), image(), 14),
        "beit": (lambda: T.BeitModel(T.BeitConfig(**small, use_relative_position_bias=True)),
                 image(), 13),
        "swin": (lambda: T.SwinModel(T.SwinConfig()), image(), 13),
        "levit": (lambda: T.LevitModel(T.LevitConfig()), image(), 13),
        "mobilevit": (lambda: T.MobileViTModel(T.MobileViTConfig()), image(256), 13),
        "efficientformer": (lambda: T.EfficientFormerModel(T.EfficientFormerConfig()),
                            image(), 13),
        "poolformer": (lambda: T.PoolFormerModel(T.PoolFormerConfig()), image(), 13),
        "convnext": (lambda: T.ConvNextModel(T.ConvNextConfig()), image(), 13),
        "resnet": (lambda: T.ResNetModel(T.ResNetConfig()), image(), 11),
        "mobilenet_v2": (lambda: T.MobileNetV2Model(T.MobileNetV2Config()), image(), 13),
        "segformer": (lambda: T.SegformerForSemanticSegmentation(T.SegformerConfig()),
                      image(256), 13),
        "detr": (lambda: T.DetrForObjectDetection(T.DetrConfig(
            use_timm_backbone=False, use_pretrained_backbone=False,
            backbone_config=detr_backbone, d_model=128, encoder_layers=2, decoder_layers=2,
            num_queries=20, encoder_ffn_dim=256, decoder_ffn_dim=256)), image(256), 12),
        "yolos": (lambda: T.YolosModel(T.YolosConfig(**small, image_size=[224, 224])),
                  image(), 12),
        "whisper_encoder": (lambda: T.WhisperModel(whisper).get_encoder(),
                            {"input_features": np.random.RandomState(0).randn(1, 80, 200)
                             .astype(np.float32)}, 14),
        "wav2vec2": (lambda: T.Wav2Vec2Model(T.Wav2Vec2Config(**small)),
                     {"input_values": np.random.RandomState(0).randn(1, 16000)
                      .astype(np.float32)}, 13),
        **more_models(T, small, detr_backbone),
    }


def more_models(T, small, detr_backbone):
    """The second sweep (2026-11-28): decoders with rotary positions and grouped-query
    attention, encoder-decoders, more encoders, vision backbones and depth estimation, audio,
    DETR's successors. Opset 14 throughout."""
    def audio():
        return {"input_values": np.random.RandomState(0).randn(1, 16000).astype(np.float32)}
    decoder = dict(vocab_size=1000, use_cache=False, **small)
    return {
        "llama": (lambda: T.LlamaModel(T.LlamaConfig(num_key_value_heads=2, **decoder)),
                  text(1000), 14),
        "mistral": (lambda: T.MistralModel(T.MistralConfig(num_key_value_heads=2, **decoder)),
                    text(1000), 14),
        "phi": (lambda: T.PhiModel(T.PhiConfig(**decoder)), text(1000), 14),
        "gpt_neox": (lambda: T.GPTNeoXModel(T.GPTNeoXConfig(**decoder)), text(1000), 14),
        "bloom": (lambda: T.BloomModel(T.BloomConfig(vocab_size=1000, hidden_size=128, n_layer=2,
                                                     n_head=4, use_cache=False)), text(1000), 14),
        "opt": (lambda: T.OPTModel(T.OPTConfig(
            vocab_size=1000, hidden_size=128, num_hidden_layers=2, ffn_dim=256,
            num_attention_heads=4, word_embed_proj_dim=128, use_cache=False)), text(1000), 14),
        "bart": (lambda: T.BartModel(T.BartConfig(
            vocab_size=1000, d_model=128, encoder_layers=2, decoder_layers=2,
            encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=256,
            decoder_ffn_dim=256, use_cache=False)), text(1000), 14),
        "mobilebert": (lambda: T.MobileBertModel(T.MobileBertConfig(vocab_size=1000,
                                                                    num_hidden_layers=2)),
                       text(1000, True), 14),
        "squeezebert": (lambda: T.SqueezeBertModel(T.SqueezeBertConfig(
            vocab_size=1000, embedding_size=128, **small)), text(1000), 14),
        "convbert": (lambda: T.ConvBertModel(T.ConvBertConfig(
            vocab_size=1000, embedding_size=128, **small)), text(1000, True), 14),
        "funnel": (lambda: T.FunnelModel(T.FunnelConfig(
            vocab_size=1000, block_sizes=[1, 1], d_model=128, n_head=4, d_head=32, d_inner=256)),
            text(1000, True), 14),
        "roformer": (lambda: T.RoFormerModel(T.RoFormerConfig(
            vocab_size=1000, embedding_size=128, **small)), text(1000, True), 14),
        "mpnet": (lambda: T.MPNetModel(T.MPNetConfig(vocab_size=1000, **small)), text(1000), 14),
        "esm": (lambda: T.EsmModel(T.EsmConfig(vocab_size=33, pad_token_id=1,
                                               position_embedding_type="rotary", **small)),
                text(33), 14),
        "deberta": (lambda: T.DebertaModel(T.DebertaConfig(vocab_size=1000, **small)),
                    text(1000), 14),
        "dinov2": (lambda: T.Dinov2Model(T.Dinov2Config(hidden_size=128, num_hidden_layers=2,
                                                        num_attention_heads=4)), image(), 14),
        "convnextv2": (lambda: T.ConvNextV2Model(T.ConvNextV2Config()), image(), 14),
        "pvt": (lambda: T.PvtModel(T.PvtConfig()), image(), 14),
        "regnet": (lambda: T.RegNetModel(T.RegNetConfig()), image(), 14),
        "bit": (lambda: T.BitModel(T.BitConfig()), image(), 14),
        "glpn": (lambda: T.GLPNForDepthEstimation(T.GLPNConfig()), image(256), 14),
        "dpt": (lambda: T.DPTForDepthEstimation(T.DPTConfig(
            hidden_size=128, num_hidden_layers=4, num_attention_heads=4, intermediate_size=256,
            backbone_out_indices=[0, 1, 2, 3], neck_hidden_sizes=[32, 64, 128, 128],
            fusion_hidden_size=64)), image(), 14),
        "hubert": (lambda: T.HubertModel(T.HubertConfig(**small)), audio(), 14),
        "wavlm": (lambda: T.WavLMModel(T.WavLMConfig(**small)), audio(), 14),
        "ast": (lambda: T.ASTModel(T.ASTConfig(**small)),
                {"input_values": np.random.RandomState(0).randn(1, 1024, 128)
                 .astype(np.float32)}, 14),
        "conditional_detr": (lambda: T.ConditionalDetrModel(T.ConditionalDetrConfig(
            use_timm_backbone=False, use_pretrained_backbone=False, backbone_config=detr_backbone,
            d_model=128, encoder_layers=2, decoder_layers=2, num_queries=20,
            encoder_ffn_dim=256, decoder_ffn_dim=256)), image(256), 14),
    }


def export(make, inputs, opset, model_dir):
    """model.onnx and one NAME.npy per input in model_dir, unless already there."""
    import torch
    onnx = os.path.join(model_dir, "model.onnx")
    if os.path.exists(onnx):
        return onnx
    os.makedirs(model_dir, exist_ok=True)
    torch.manual_seed(0)
    model = make().eval()
    names = list(inputs)

    class ByName(torch.nn.Module):
        """Passes the inputs by keyword: positional orders differ between models."""
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, *args):
            out = self.m(**dict(zip(names, args)))
            return tuple(v for v in out.values() if isinstance(v, torch.Tensor))

    dynamic = {}
    for n, v in inputs.items():
        dynamic[n] = {0: "batch", 1: "seq"} if v.dtype == np.int64 else {0: "batch"}
    tmp = onnx + ".tmp"
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(ByName(model), tuple(torch.from_numpy(inputs[n]) for n in names), tmp,
                          opset_version=opset, input_names=names, dynamic_axes=dynamic)
    for n, v in inputs.items():
        np.save(os.path.join(model_dir, n + ".npy"), v)
    os.replace(tmp, onnx)  # a killed export leaves no model behind
    return onnx


def kiln_latency(args, out_dir, feeds, runs):
    cmd = [os.path.join(args.build, "tools", "kiln"), "run", out_dir, "--runs", str(runs),
           "--threads", str(args.threads)]
    for n, path in feeds.items():
        cmd += ["--input", f"{n}={path}"]
    text_out = nb.run(cmd)
    return float(re.search(r"median ([\d.]+) ms", text_out).group(1))


def bench(args, name, make, inputs, opset):
    import onnxruntime as ort
    model_dir = os.path.join(args.work, name)
    out_dir = os.path.join(model_dir, "kiln")
    row = {"model": name, "opset": opset}
    try:
        onnx = export(make, inputs, opset, model_dir)
    except Exception as e:  # an exporter limit, not kiln's
        row["error"] = "export failed: " + str(e).splitlines()[0][:120]
        return row
    cmd = [os.path.join(args.build, "tools", "kiln"), "compile", onnx, "--target", args.target,
           "--input-shape", "batch=1", "-o", out_dir]
    if any(v.dtype == np.int64 for v in inputs.values()):
        cmd += ["--input-shape", f"seq={SEQ}"]
    t0 = time.perf_counter()
    try:
        nb.run(cmd)
    except subprocess.CalledProcessError as e:
        lines = (e.stderr or e.stdout or "").strip().splitlines()
        row["error"] = lines[-1] if lines else f"kiln compile exited {e.returncode}"
        return row
    row["compile_s"] = time.perf_counter() - t0
    feeds = {n: os.path.join(model_dir, n + ".npy") for n in inputs}
    # Outputs: `kiln run --output` writes each under its name, non-file characters as '_'.
    res = os.path.join(out_dir, "outputs")
    cmd = [os.path.join(args.build, "tools", "kiln"), "run", out_dir, "--runs", "1",
           "--output", res]
    for n, path in feeds.items():
        cmd += ["--input", f"{n}={path}"]
    nb.run(cmd)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads, opts.inter_op_num_threads = args.threads, 1
    session = ort.InferenceSession(onnx, opts, providers=["CPUExecutionProvider"])
    want = session.run(None, inputs)
    err = 0.0
    for out, w in zip(session.get_outputs(), want):
        got = np.load(os.path.join(res, re.sub(r"[^A-Za-z0-9._-]", "_", out.name) + ".npy"))
        scale = max(float(np.abs(w).max()), 1e-30)
        err = max(err, float(np.abs(got.astype(np.float64) - w).max()) / scale)
    row["rel_err"] = err
    times = {"kiln": [], "ort": []}
    for _ in range(args.rounds):
        times["kiln"].append(kiln_latency(args, out_dir, feeds, args.runs))
        ort_ms = []
        for _ in range(args.runs):
            t = time.perf_counter()
            session.run(None, inputs)
            ort_ms.append((time.perf_counter() - t) * 1e3)
        times["ort"].append(statistics.median(ort_ms))
    row["kiln_ms"] = statistics.median(times["kiln"])
    row["ort_ms"] = statistics.median(times["ort"])
    return row


def run_zoo(description, work, tool, make_zoo, packages):
    """The table for the models make_zoo() returns, or how to install what it imports."""
    args = zb.zoo_args(description, work).parse_args()
    try:
        models = make_zoo()
    except ImportError:
        sys.exit(f"{tool}: needs {packages} in this Python: "
                 f"{sys.executable} -m pip install {packages}")
    zb.print_table(args, models, bench, tool)


def main():
    run_zoo(__doc__.splitlines()[0], "hf_zoo", "hf_zoo_bench", zoo, "transformers==4.36.2")


if __name__ == "__main__":
    main()
