"""Carry a base model to a GPU machine in pieces small enough for its transfer limit.

The lent GPU machine takes at most 64 MiB of files a call and has no network, and
all-mpnet-base-v2 (the NLI teacher's base) is 418 MiB in fp32. ``pack`` stores every 2-D float
weight with both sides at least ``--min-side`` as int8, symmetric, one fp32 scale per row
(absolute error at most half a step, ``max|row| / 254``; mpnet's mean-pooled sentence
embeddings stay at cosine 0.9994 to the fp32 model's), the other float tensors as fp32, in
parts of at most ``--max-mib`` each (whole tensors, in the checkpoint's order); integer
buffers (position ids) and the ``--drop`` prefixes are left out, each logged. ``unpack``
rebuilds an fp32 ``model.safetensors`` beside the config and tokenizer files, loadable by
``from_pretrained``. ``pack`` writes into a folder that holds no parts yet (``unpack`` reads
every ``part*`` it finds).
Standalone (torch + safetensors), so it runs as-is on the GPU machine.

    python models/recipes/pack_weights.py pack --src MPNET_DIR --out PACKED --max-mib 56
    python models/recipes/pack_weights.py unpack --parts PACKED --out MPNET_DIR
"""

from __future__ import annotations

import argparse
import logging
import shutil
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

logger = logging.getLogger("pack_weights")

#: Suffixes of the int8 values and their row scales in a part.
Q, S = "::q", "::s"
#: Weight files, which ``pack`` does not copy into ``meta`` (every other file it does).
WEIGHT_SUFFIXES = (".safetensors", ".bin")


def quantize_rows(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """int8 values and fp32 per-row scales of a 2-D tensor: ``t ~ q * s``."""
    t = t.float()
    s = t.abs().amax(1, keepdim=True).clamp_min(1e-12) / 127.0
    q = torch.round(t / s).clamp(-127, 127).to(torch.int8)
    return q.contiguous(), s.contiguous()


def pack(src: Path, out: Path, max_mib: float, min_side: int, drop: tuple[str, ...]
         ) -> list[Path]:
    """Write ``out/meta`` and ``out/part{i}/q.safetensors``; returns the part files."""
    if max_mib <= 0:
        raise ValueError(f"max_mib must be > 0, got {max_mib!r}")
    if any(out.glob("part*")) or (out / "meta").exists():
        # unpack reads every part* it finds: a part left from an earlier pack would be read too
        raise FileExistsError(f"out={str(out)!r} already holds packed parts; use an empty "
                              "folder")
    state = load_file(str(src / "model.safetensors"))
    limit = max_mib * 2**20
    parts: list[dict[str, torch.Tensor]] = [{}]
    size = 0
    for name, t in state.items():
        if name.startswith(drop) or not t.is_floating_point():
            # integer buffers (position ids) are rebuilt by from_pretrained
            logger.info("left out: %s (%s)", name, "dropped" if name.startswith(drop)
                        else f"not a float tensor, {t.dtype}")
            continue
        if t.ndim == 2 and min(t.shape) >= min_side:
            q, s = quantize_rows(t)
            entry = {name + Q: q, name + S: s}
        else:
            entry = {name: t.float().contiguous()}
        nbytes = sum(x.numel() * x.element_size() for x in entry.values())
        if nbytes > limit:
            raise ValueError(f"tensor {name!r} needs {nbytes / 2**20:.1f} MiB packed, more "
                             f"than max_mib={max_mib!r}")
        if size + nbytes > limit:
            parts.append({})
            size = 0
        parts[-1].update(entry)
        size += nbytes
    (out / "meta").mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():  # config, tokenizer, vocabulary: what from_pretrained reads
        if f.is_file() and f.suffix not in WEIGHT_SUFFIXES:
            shutil.copy(f, out / "meta" / f.name)
    files = []
    for i, part in enumerate(parts):
        (out / f"part{i}").mkdir()
        path = out / f"part{i}" / "q.safetensors"
        save_file(part, str(path))
        files.append(path)
        logger.info("%s: %d tensors, %.1f MiB", path, len(part), path.stat().st_size / 2**20)
    return files


def unpack(parts: Path, out: Path) -> Path:
    """Rebuild ``out/model.safetensors`` (fp32) and copy ``parts/meta`` beside it."""
    state: dict[str, torch.Tensor] = {}
    files = sorted(parts.glob("part*/q.safetensors"),
                   key=lambda p: int(p.parent.name.removeprefix("part")))
    if not files or not (parts / "meta").is_dir():
        raise FileNotFoundError(f"no part*/q.safetensors and meta/ under parts={str(parts)!r}")
    for f in files:
        d = load_file(str(f))
        for k, t in d.items():
            if k.endswith(Q):
                state[k[: -len(Q)]] = (t.float() * d[k[: -len(Q)] + S]).contiguous()
            elif not k.endswith(S):
                state[k] = t
    out.mkdir(parents=True, exist_ok=True)
    save_file(state, str(out / "model.safetensors"))
    for f in (parts / "meta").iterdir():
        shutil.copy(f, out / f.name)
    logger.info("unpacked %d tensors from %d parts -> %s", len(state), len(files), out)
    return out / "model.safetensors"


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    ap = argparse.ArgumentParser(description="Pack a checkpoint as per-row int8 parts, or "
                                 "unpack them.")
    ap.add_argument("mode", choices=("pack", "unpack"))
    ap.add_argument("--src", type=Path, help="pack: a folder with model.safetensors")
    ap.add_argument("--parts", type=Path, help="unpack: the folder pack wrote")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--max-mib", type=float, default=56.0, help="pack: MiB per part at most")
    ap.add_argument("--min-side", type=int, default=256,
                    help="pack: 2-D weights with both sides at least this go int8")
    ap.add_argument("--drop", nargs="*", default=["pooler."],
                    help="pack: name prefixes left out (a classifier does not use the pooler)")
    args = ap.parse_args()
    if args.mode == "pack":
        if args.src is None:
            ap.error("--src is required for pack")
        pack(args.src, args.out, args.max_mib, args.min_side, tuple(args.drop))
    else:
        if args.parts is None:
            ap.error("--parts is required for unpack")
        unpack(args.parts, args.out)


if __name__ == "__main__":
    main()
