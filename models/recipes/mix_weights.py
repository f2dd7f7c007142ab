"""Interpolate two fine-tuned checkpoints of one architecture (WiSE-FT style weight averaging).

``(1 - alpha) * A + alpha * B`` for every floating-point tensor; other tensors (position ids)
and the config and tokenizer files (:data:`CONFIG_FILES`) come from ``B``. Used to trade a
later fine-tuning stage's gains against what it made the model forget (see
``models/nli-minilm-l6/README.md``).

    python models/recipes/mix_weights.py --a V0.1_FOLDER --b models/nli-minilm-l6 --alpha 0.5 \
        --out MIX
"""

from __future__ import annotations

import argparse
import logging
import shutil
from pathlib import Path

logger = logging.getLogger("mix_weights")


#: Files copied from ``B`` besides the weights (its config carries the model's settings).
CONFIG_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json",
                "special_tokens_map.json", "vocab.txt")


def main() -> None:
    from safetensors.torch import load_file, save_file

    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--a", type=Path, required=True, help="checkpoint folder A (alpha = 0)")
    ap.add_argument("--b", type=Path, required=True, help="checkpoint folder B (alpha = 1)")
    ap.add_argument("--alpha", type=float, required=True, help="weight of B, in [0, 1]")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    if not 0.0 <= args.alpha <= 1.0:
        ap.error(f"--alpha must be in [0, 1], got {args.alpha}")
    a = load_file(args.a / "model.safetensors")
    b = load_file(args.b / "model.safetensors")
    if a.keys() != b.keys() or any(a[k].shape != b[k].shape for k in b):
        ap.error("--a and --b must hold the same tensors (one architecture)")
    mixed = {k: ((1 - args.alpha) * a[k].float() + args.alpha * b[k].float()).to(b[k].dtype)
             if b[k].is_floating_point() else b[k] for k in b}
    args.out.mkdir(parents=True, exist_ok=True)
    for name in CONFIG_FILES:
        if (args.b / name).is_file():
            shutil.copy2(args.b / name, args.out / name)
    save_file(mixed, str(args.out / "model.safetensors"), metadata={"format": "pt"})
    logger.info("wrote %s (alpha %.2f; %d tensors)", args.out, args.alpha, len(mixed))


if __name__ == "__main__":
    main()
