"""Fine-tune (or distil) a 3-class NLI cross-encoder; the recipe of the embedded NLI model.

Standalone: needs only torch, transformers and numpy, so it runs as-is on a GPU machine.

Modes:
- ``train``: cross-entropy on gold labels, optionally mixed with KL to a teacher's soft
  labels (``--teacher-logits``, aligned with the concatenated ``--train`` files; rows with a
  ``null`` label are distillation-only).
- ``logits``: write a model's logits for the pairs of ``--train`` files to ``--logits-out``
  (the teacher's soft labels for distillation).

Every run evaluates on the ``--eval`` files: 3-class accuracy, and for ``eval2_*`` files the
SUPPORTS-vs-REFUTES accuracy (SUPPORTS iff p(entailment) > p(contradiction)).

Example (the embedded model; see models/nli-minilm-l6/README.md for the full recipe):
    python models/recipes/train_nli.py train --base MINILM --train data/train_human.jsonl \
        --eval data/eval_snli.jsonl --out out/student --epochs 3 --lr 6e-5 --seed 13
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

# this checkout's packages, also where they are not installed (gpu_teacher_student.sh)
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from verifier.checking import arg_number  # noqa: E402
from verifier.nli import MIN_EVIDENCE_TOKENS  # noqa: E402

LABELS = ("entailment", "neutral", "contradiction")
L2I = {name: i for i, name in enumerate(LABELS)}


def column_order(config) -> list[int] | None:
    """The columns of a 3-class checkpoint's logits in :data:`LABELS` order, read from its
    ``id2label`` as ``NLIDetector`` reads it (:func:`verifier.nli.map_labels`).

    ``None`` when its labels are generic (``LABEL_0``...): their order cannot be told, and
    the columns are taken as they are. A checkpoint whose labels are not the three NLI
    classes (2-class, one logit) is refused.
    """
    from verifier.nli import LabelMappingError, map_labels

    if config.num_labels != 3:
        raise SystemExit(f"--base has {config.num_labels} labels ({config.id2label}); this "
                         f"script reads 3-class checkpoints (entailment, neutral, "
                         f"contradiction)")
    try:
        index = map_labels(config.id2label, 3).index
    except LabelMappingError:
        if all(str(v).upper().startswith("LABEL_") for v in config.id2label.values()):
            print(f"warning: --base's labels {config.id2label} are generic: its columns are "
                  f"read as {LABELS}", flush=True)
            return None
        raise
    if set(index) != set(LABELS):
        raise SystemExit(f"--base's labels {config.id2label} are not {LABELS}")
    return [index[name] for name in LABELS]


def nli_logits(logits: np.ndarray, order: list[int] | None) -> np.ndarray:
    """A checkpoint's logits with their columns in :data:`LABELS` order."""
    return logits if order is None else logits[:, order]


def read_pairs(paths: list[Path]) -> tuple[list[str], list[str], np.ndarray]:
    prem, hyp, lab = [], [], []
    for p in paths:
        with p.open(encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                r = json.loads(line)
                prem.append(r["premise"])
                hyp.append(r["hypothesis"])
                lab.append(-1 if r.get("label") is None else L2I[r["label"]])
    return prem, hyp, np.asarray(lab, dtype=np.int64)


#: One tokenised pair: input ids and the tokenizer's segment (token type) ids.
Encoded = tuple[list[int], list[int]]


def tokenize(tok, prem, hyp, max_length: int) -> list[Encoded]:
    out: list[Encoded] = []
    step = 4096
    for i in range(0, len(prem), step):
        enc = tok(prem[i : i + step], hyp[i : i + step], truncation="longest_first",
                  max_length=max_length, return_token_type_ids=True)
        out.extend(zip(enc["input_ids"], enc["token_type_ids"], strict=True))
    return out


def uses_token_types(tok, args) -> bool:
    """Whether batches carry ``token_type_ids``: ``--token-types`` (the default) and a
    tokenizer whose model takes them (BERT-style MiniLM does, MPNet does not), as
    ``NLIDetector`` feeds them at inference."""
    return bool(args.token_types) and "token_type_ids" in tok.model_input_names


def collate(tok, batch: list[Encoded], device: str, token_types: bool
            ) -> dict[str, torch.Tensor]:
    n = max(len(x) for x, _ in batch)
    pad = tok.pad_token_id
    ids = torch.full((len(batch), n), pad, dtype=torch.long)
    types = torch.zeros((len(batch), n), dtype=torch.long)
    mask = torch.zeros((len(batch), n), dtype=torch.long)
    for i, (x, t) in enumerate(batch):
        ids[i, : len(x)] = torch.tensor(x)
        types[i, : len(t)] = torch.tensor(t)
        mask[i, : len(x)] = 1
    out = {"input_ids": ids.to(device), "attention_mask": mask.to(device)}
    if token_types:
        out["token_type_ids"] = types.to(device)
    return out


def bucket_batches(lengths: np.ndarray, batch_size: int, rng: random.Random,
                   shuffle: bool) -> list[np.ndarray]:
    idx = np.arange(len(lengths))
    if shuffle:
        perm = np.array(rng.sample(range(len(lengths)), len(lengths)))
        idx = perm
        mega = batch_size * 50
        chunks = [idx[i : i + mega] for i in range(0, len(idx), mega)]
        idx = np.concatenate([c[np.argsort(lengths[c], kind="stable")] for c in chunks])
    else:
        idx = np.argsort(lengths, kind="stable")
    batches = [idx[i : i + batch_size] for i in range(0, len(idx), batch_size)]
    if shuffle:
        rng.shuffle(batches)
    return batches


@torch.inference_mode()
def predict_logits(model, tok, ids: list[Encoded], device: str, batch_size: int,
                   amp_dtype, token_types: bool) -> np.ndarray:
    model.eval()
    lengths = np.array([len(x) for x, _ in ids])
    out = np.zeros((len(ids), model.config.num_labels), dtype=np.float32)
    for b in bucket_batches(lengths, batch_size, random.Random(0), shuffle=False):
        batch = collate(tok, [ids[i] for i in b], device, token_types)
        with torch.autocast(device_type=device.split(":")[0], dtype=amp_dtype,
                            enabled=amp_dtype is not None):
            logits = model(**batch).logits
        out[b] = logits.float().cpu().numpy()
    return out


def evaluate(model, tok, eval_files: list[Path], args, device: str, amp_dtype,
             order: list[int] | None = None) -> dict:
    """Accuracy on each file; a file without neutral labels (``eval2_*``, ``dev2_*``: FEVER-
    style supports / refutes) by the larger of entailment and contradiction, others by the
    argmax of the three (``order``: :func:`column_order` of the model)."""
    res = {}
    for f in eval_files:
        prem, hyp, lab = read_pairs([f])
        ids = tokenize(tok, prem, hyp, args.eval_max_length)
        logits = nli_logits(predict_logits(model, tok, ids, device, args.eval_batch_size,
                                           amp_dtype, uses_token_types(tok, args)), order)
        probs = torch.softmax(torch.from_numpy(logits), -1).numpy()
        name = f.stem
        if not (lab == L2I["neutral"]).any():  # eval2_*, dev2_*: supports / refutes
            pred = np.where(probs[:, 0] > probs[:, 2], 0, 2)
        else:
            pred = probs.argmax(1)
        res[name] = round(float((pred == lab).mean()), 4)
    return res


def cmd_train(args) -> None:
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    np.random.seed(args.seed)
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    amp_dtype = torch.bfloat16 if args.bf16 else None
    tok = AutoTokenizer.from_pretrained(args.base)
    base_config = AutoConfig.from_pretrained(args.base)
    # a 3-class head is kept: its rows are put in LABELS order (a base whose id2label has
    # another order had its head relabelled, not reordered); another head is new
    order = column_order(base_config) if base_config.num_labels == 3 else None
    # fp32 master weights whatever the checkpoint stores: transformers 5 loads a checkpoint
    # in its stored dtype, and AdamW steps on bf16 weights round most updates away
    # (tests/test_recipes.py: one epoch at lr 1e-5 changes > 90 % of a tiny bf16
    # checkpoint's encoder weights in fp32, 18 % in bf16); --bf16 autocasts the compute only
    model = AutoModelForSequenceClassification.from_pretrained(
        args.base, num_labels=3, id2label=dict(enumerate(LABELS)), label2id=L2I,
        ignore_mismatched_sizes=True, dtype=torch.float32,
        attn_implementation=args.attn_implementation,
    ).to(device)
    if order is not None and order != [0, 1, 2]:
        head = [m for m in model.modules()
                if isinstance(m, torch.nn.Linear) and m.out_features == 3][-1]
        with torch.no_grad():
            head.weight.copy_(head.weight[order].clone())
            head.bias.copy_(head.bias[order].clone())
    if args.freeze_embeddings:
        # the word-embedding matrix is most of a small encoder's parameters (MiniLM-L6: 11.7M
        # of 22.7M): frozen, AdamW and the dense embedding gradient skip it
        model.get_input_embeddings().weight.requires_grad_(False)
    prem, hyp, lab = read_pairs(args.train)
    teacher = None
    if args.teacher_logits:
        teacher = torch.from_numpy(np.load(args.teacher_logits)).float()
        if len(teacher) != len(prem):
            raise SystemExit(f"teacher logits rows {len(teacher)} != train rows {len(prem)}")
    keep = np.arange(len(prem)) if teacher is not None else np.where(lab >= 0)[0]
    if args.limit:
        keep = keep[: args.limit]
    t0 = time.time()
    ids_all = tokenize(tok, [prem[i] for i in keep], [hyp[i] for i in keep], args.max_length)
    lab = torch.from_numpy(lab[keep])
    if teacher is not None:
        teacher = teacher[torch.from_numpy(keep)]
    lengths = np.array([len(x) for x, _ in ids_all])
    print(f"tokenised {len(ids_all)} pairs in {time.time() - t0:.0f}s; mean len "
          f"{lengths.mean():.0f}", flush=True)
    steps_per_epoch = math.ceil(len(ids_all) / args.batch_size)
    total = steps_per_epoch * args.epochs
    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight", "norm.weight")
    trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    groups = [
        {"params": [p for n, p in trainable if not any(k in n for k in no_decay)],
         "weight_decay": 0.01},
        {"params": [p for n, p in trainable if any(k in n for k in no_decay)],
         "weight_decay": 0.0},
    ]
    # fused AdamW runs on CPUs too: one kernel over all tensors instead of a per-tensor loop
    opt = torch.optim.AdamW(groups, lr=args.lr, fused=True)
    warm = int(args.warmup * total)
    def lr_factor(s: int) -> float:  # linear warm-up, then linear decay to 0
        if s < warm:
            return (s + 1) / max(1, warm)
        return max(0.0, (total - s) / max(1, total - warm))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor)
    step, t_start = 0, time.time()
    history = []
    token_types = uses_token_types(tok, args)
    for epoch in range(args.epochs):
        model.train()
        run_loss, n_loss = 0.0, 0
        for b in bucket_batches(lengths, args.batch_size, rng, shuffle=True):
            batch = collate(tok, [ids_all[i] for i in b], device, token_types)
            bl = lab[b].to(device)
            with torch.autocast(device_type=device.split(":")[0], dtype=amp_dtype,
                                enabled=amp_dtype is not None):
                logits = model(**batch).logits.float()
            loss = torch.zeros((), device=device)
            has = bl >= 0
            if teacher is not None:
                t = teacher[b].to(device)
                T = args.temperature
                kl = F.kl_div(F.log_softmax(logits / T, -1), F.softmax(t / T, -1),
                              reduction="batchmean") * T * T
                loss = loss + args.alpha * kl
                if has.any():
                    loss = loss + (1 - args.alpha) * F.cross_entropy(
                        logits[has], bl[has], label_smoothing=args.label_smoothing)
            else:
                loss = F.cross_entropy(logits, bl, label_smoothing=args.label_smoothing)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            if not math.isfinite(loss.item()):
                raise SystemExit(f"loss is {loss.item()} at step {step} (epoch {epoch}): "
                                 f"nothing saved; lower --lr or check --temperature")
            run_loss += loss.item()
            n_loss += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step}/{total} loss {run_loss / n_loss:.4f} "
                      f"{time.time() - t_start:.0f}s", flush=True)
                run_loss, n_loss = 0.0, 0
            if args.time_budget and time.time() - t_start > args.time_budget:
                print(f"time budget {args.time_budget}s reached at step {step}", flush=True)
                break
        metrics = evaluate(model, tok, args.eval, args, device, amp_dtype) if args.eval else {}
        history.append({"epoch": epoch, "step": step, "seconds": round(time.time() - t_start),
                        **metrics})
        print(json.dumps(history[-1]), flush=True)
        if args.time_budget and time.time() - t_start > args.time_budget:
            break
    args.out.mkdir(parents=True, exist_ok=True)
    model.config.id2label = dict(enumerate(LABELS))
    model.config.label2id = dict(L2I)
    model.to(torch.float32 if args.save_dtype == "float32" else torch.bfloat16)
    model.save_pretrained(args.out, safe_serialization=True)
    tok.save_pretrained(args.out)
    info = {"args": {k: str(v) for k, v in vars(args).items() if k != "func"},
            "train_pairs": len(ids_all), "history": history}
    (args.out / "training_log.json").write_text(json.dumps(info, indent=2))
    print("saved", args.out, flush=True)


def cmd_logits(args) -> None:
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    amp_dtype = torch.bfloat16 if args.bf16 else None
    tok = AutoTokenizer.from_pretrained(args.base)
    model, order = load_for_inference(args.base, device)
    prem, hyp, _ = read_pairs(args.train)
    ids = tokenize(tok, prem, hyp, args.max_length)
    t0 = time.time()
    logits = nli_logits(predict_logits(model, tok, ids, device, args.eval_batch_size,
                                       amp_dtype, uses_token_types(tok, args)), order)
    np.save(args.logits_out, logits.astype(np.float32))
    print(f"logits for {len(ids)} pairs in {time.time() - t0:.0f}s -> {args.logits_out}",
          flush=True)


def cmd_eval(args) -> None:
    """The accuracies ``train`` logs after each epoch, for any saved model (no training)."""
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    tok = AutoTokenizer.from_pretrained(args.base)
    model, order = load_for_inference(args.base, device)
    print(json.dumps(evaluate(model, tok, args.eval, args, device,
                              torch.bfloat16 if args.bf16 else None, order)), flush=True)


def load_for_inference(base: str, device: str):
    """A checkpoint in fp32 (``--bf16`` autocasts; a bf16 checkpoint no longer computes in
    bf16 without it) and its :func:`column_order`."""
    model = AutoModelForSequenceClassification.from_pretrained(base, dtype=torch.float32)
    return model.to(device), column_order(model.config)


def main() -> None:
    ap = argparse.ArgumentParser(description="Train, distil or evaluate a 3-class NLI "
                                 "cross-encoder.")
    ap.add_argument("mode", choices=("train", "logits", "eval"))
    ap.add_argument("--base", required=True, help="HF folder or id of the base / model")
    ap.add_argument("--train", type=Path, nargs="+", default=[])
    ap.add_argument("--eval", type=Path, nargs="*", default=[])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--logits-out", type=Path)
    ap.add_argument("--teacher-logits", type=Path)
    ap.add_argument("--alpha", type=arg_number(float, 0, 1), default=0.7,
                    help="weight of the distillation KL")
    ap.add_argument("--temperature", type=arg_number(float, 0, low_open=True), default=2.0)
    ap.add_argument("--epochs", type=arg_number(int, 1), default=2)
    ap.add_argument("--lr", type=arg_number(float, 0, low_open=True), default=3e-5)
    ap.add_argument("--warmup", type=arg_number(float, 0, 1), default=0.06)
    ap.add_argument("--label-smoothing", type=arg_number(float, 0, 1), default=0.0)
    ap.add_argument("--batch-size", type=arg_number(int, 1), default=32)
    ap.add_argument("--eval-batch-size", type=arg_number(int, 1), default=256)
    ap.add_argument("--max-length", type=arg_number(int, 2 * MIN_EVIDENCE_TOKENS), default=256)
    ap.add_argument("--eval-max-length", type=arg_number(int, 2 * MIN_EVIDENCE_TOKENS), default=512)
    ap.add_argument("--bf16", action="store_true", help="bf16 autocast (CPU with AMX, GPU)")
    ap.add_argument("--device")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--limit", type=arg_number(int, 0), default=0, help="train pairs (0: all)")
    ap.add_argument("--log-every", type=arg_number(int, 1), default=200)
    ap.add_argument("--time-budget", type=arg_number(float, 0), default=0.0,
                    help="seconds; 0 = none")
    ap.add_argument("--save-dtype", choices=("bfloat16", "float32"), default="bfloat16")
    ap.add_argument("--attn-implementation", choices=("eager", "sdpa"), default="eager",
                    help="attention kernels for training (same maths); eager is what the "
                    "v0.4 runs used")
    ap.add_argument("--freeze-embeddings", action="store_true",
                    help="keep the word embeddings fixed (faster steps on CPU)")
    ap.add_argument("--token-types", action=argparse.BooleanOptionalAction, default=True,
                    help="feed the tokenizer's token_type_ids (segment 1 for the hypothesis) "
                    "where the model takes them, as NLIDetector does; --no-token-types "
                    "reproduces the runs up to NLI v0.3 (all segment 0)")
    args = ap.parse_args()
    if args.mode == "eval":
        if not args.eval:
            ap.error("--eval is required for eval")
        cmd_eval(args)
        return
    if not args.train:
        ap.error(f"--train is required for {args.mode}")
    if args.mode == "train":
        if args.out is None:
            ap.error("--out is required for train")
        cmd_train(args)
    else:
        if args.logits_out is None:
            ap.error("--logits-out is required for logits")
        cmd_logits(args)


if __name__ == "__main__":
    main()
