#!/bin/bash
# One call on a lent GPU machine: teacher (all-mpnet-base-v2, carried as int8 parts by
# pack_weights.py) -> its soft labels -> the embedded student distilled from them -> stage 3.
# The run of 2026-11-27 (models/recipes/README.md, "v0.6 candidate"): 488 s on one H200.
#
#   PARTS=packed mpnet (pack_weights.py pack), DATA=prepare_nli_data.py --meta-holdout output
#   (plus DATA/sub/, README "v0.4"), OUT=results; TEACHER_EPOCHS, STUDENT_EPOCHS, BF16
#   (default --bf16; empty for a CPU dry run), WORK (default /tmp/w)
set -euo pipefail
set -x
export PYTHONUNBUFFERED=1
R=models/recipes/train_nli.py
W=${WORK:-/tmp/w}
BF16=${BF16---bf16}
TEACHER_EPOCHS=${TEACHER_EPOCHS:-3}
STUDENT_EPOCHS=${STUDENT_EPOCHS:-3}
mkdir -p "$W" "$OUT"
python3 models/recipes/pack_weights.py unpack --parts "$PARTS" --out "$W/mpnet"
DEV="$DATA/dev2_fever_sym.jsonl $DATA/sub/eval_snli.jsonl $DATA/sub/eval_val.jsonl $DATA/sub/eval2_fever.jsonl"
DISTILL="$DATA/train_fever.jsonl $DATA/train_human.jsonl $DATA/distill_extra.jsonl"
# shellcheck disable=SC2086  # DEV and DISTILL are lists of paths
python3 $R train --base "$W/mpnet" --train "$DATA/train_fever.jsonl" "$DATA/train_human.jsonl" \
  --eval $DEV --out "$W/teacher" --epochs "$TEACHER_EPOCHS" --lr 4e-5 --batch-size 128 \
  --max-length 256 $BF16 --seed 13 --log-every 300 --time-budget "${TEACHER_BUDGET:-290}"
# shellcheck disable=SC2086
python3 $R logits --base "$W/teacher" --train $DISTILL --logits-out "$OUT/teacher_logits.npy" \
  $BF16 --max-length 256 --eval-batch-size 512
# shellcheck disable=SC2086
python3 $R train --base models/nli-minilm-l6 --train $DISTILL \
  --teacher-logits "$OUT/teacher_logits.npy" --alpha 0.7 --temperature 2 --eval $DEV \
  --out "$W/A" --epochs "$STUDENT_EPOCHS" --lr 8e-5 --batch-size 128 --max-length 256 $BF16 \
  --seed 13 --freeze-embeddings --log-every 300
# shellcheck disable=SC2086
python3 $R train --base "$W/A" --train "$DATA/train_fever.jsonl" "$DATA/replay_human.jsonl" \
  --eval $DEV --out "$W/B" --epochs 2 --lr 3e-5 --batch-size 32 --max-length 256 $BF16 \
  --seed 13 --freeze-embeddings --log-every 200
cp "$W/teacher/training_log.json" "$W/B/teacher_log.json"
cp "$W/A/training_log.json" "$W/B/distill_log.json"
cp "$W/B/training_log.json" "$W/B/stage3_log.json"
# the machine returns files of at most 16 MB: the student in pieces (cat them back)
cd "$W/B"
tar cf "$OUT/meta.tar" config.json tokenizer.json tokenizer_config.json teacher_log.json \
  distill_log.json stage3_log.json
split -b 15000000 -d model.safetensors "$OUT/student.safetensors.part"
