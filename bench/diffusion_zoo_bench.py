#!/usr/bin/env python3
"""Diffusion models kiln's tests do not name, compiled untuned and checked against ONNX
Runtime: a DDPM UNet (timestep embedding, GroupNorm, self-attention), a Stable Diffusion
style conditional UNet (cross-attention over text states, GEGLU feed-forwards) and a KL
autoencoder (the VAE that turns latents into images), from diffusers 0.25.

Weights are random (no download) and the configurations small (two or three resolution
levels, 32 to 64 channels, groups of 8), so each export takes seconds; the operators and the
patterns between them are the real models'. The timestep is a runtime input, so its
sinusoidal embedding (Sin, Cos) runs on every call. Columns as in hf_zoo_bench.py (whose
export and timing this script reuses).

  scripts/python-env.sh build
  build/pyenv/bin/pip install diffusers==0.25.0 huggingface_hub==0.20.3
  nice ninja -C build -j2 kiln
  build/pyenv/bin/python bench/diffusion_zoo_bench.py [--models sd_unet ...] [--threads 2]

The exports are kept in --work (build/diffusion_zoo) and reused.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_zoo_bench as hz  # noqa: E402  (the export, the row and the table, not copied)


def zoo():
    """name -> (constructor, inputs, opset)."""
    import diffusers as D
    rs = np.random.RandomState(0)

    def latents(channels, size):
        return rs.randn(1, channels, size, size).astype(np.float32)

    timestep = np.array([10.0], np.float32)
    return {
        "ddpm_unet": (lambda: D.UNet2DModel(
            sample_size=32, in_channels=3, out_channels=3, layers_per_block=1,
            block_out_channels=(32, 64, 64), norm_num_groups=8,
            down_block_types=("DownBlock2D", "AttnDownBlock2D", "DownBlock2D"),
            up_block_types=("UpBlock2D", "AttnUpBlock2D", "UpBlock2D")),
            {"sample": latents(3, 32), "timestep": timestep}, 14),
        "sd_unet": (lambda: D.UNet2DConditionModel(
            sample_size=32, in_channels=4, out_channels=4, layers_per_block=1,
            block_out_channels=(32, 64), norm_num_groups=8, cross_attention_dim=32,
            attention_head_dim=8, down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
            up_block_types=("UpBlock2D", "CrossAttnUpBlock2D")),
            {"sample": latents(4, 32), "timestep": timestep,
             "encoder_hidden_states": rs.randn(1, 77, 32).astype(np.float32)}, 14),
        "vae": (lambda: D.AutoencoderKL(
            in_channels=3, out_channels=3, latent_channels=4, block_out_channels=(32, 64),
            layers_per_block=1, norm_num_groups=8,
            down_block_types=("DownEncoderBlock2D",) * 2,
            up_block_types=("UpDecoderBlock2D",) * 2),
            {"sample": latents(3, 64)}, 14),
    }


def main():
    hz.run_zoo(__doc__.splitlines()[0], "diffusion_zoo", "diffusion_zoo_bench", zoo,
               "diffusers==0.25.0 huggingface_hub==0.20.3")


if __name__ == "__main__":
    main()
