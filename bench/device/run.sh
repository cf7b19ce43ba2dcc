#!/usr/bin/env bash
# The GPU machine's check (device tool; see bench/README.md "On a GPU"): the project's PyTorch
# trainer on CUDA against the same machine's 16 CPU cores (same data, steps, seed), the
# torchrun/NCCL path on one GPU, and llama.cpp from node-llama-cpp's bundle built with CUDA:
# offload (llama-bench, -ngl 0 vs 99) and per-request LoRA switching in llama-server.
# Inputs from `npx tsx bench/device/prep.ts` (.dev/); results under $OUT (at most 8 files).
set -u
D=${D:-.dev}
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
LOG=$OUT/log.txt
exec > >(tee -a "$LOG") 2>&1
export PYTHONPATH=cloud/trainer PYTHONUNBUFFERED=1
echo "== env"; nvidia-smi -L; nproc; python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())'
T0=$(date +%s)

echo "== trainer: pretrain the demo base, 150 steps, batch 16"
for dev in cuda cpu; do
  timeout 90 python3 -m macaron_trainer pretrain --base $D/init.gguf --data $D/pretrain.tok.jsonl \
    --out /tmp/pre-$dev.gguf --report $OUT/pretrain-$dev.json --steps 150 --batch-size 16 --seed 0 \
    --threads 16 --device $dev | tail -n 2
done
echo "== trainer: coding LoRA on the demo base, 100 steps, batch 16"
for dev in cuda cpu; do
  timeout 60 python3 -m macaron_trainer train --base resources/demo/base.gguf --data $D/coding.tok.jsonl \
    --heldout $D/coding.heldout.tok.jsonl --out /tmp/lora-$dev.gguf --report $OUT/lora-$dev.json \
    --steps 100 --batch-size 16 --seed 0 --threads 16 --device $dev | tail -n 2
done
echo "== trainer: torchrun (NCCL), 1 process on the GPU"
timeout 90 python3 -m torch.distributed.run --standalone --nproc_per_node 1 -m macaron_trainer train \
  --base resources/demo/base.gguf --data $D/coding.tok.jsonl --out /tmp/lora-ddp.gguf \
  --report /tmp/lora-ddp.json --steps 50 --batch-size 16 --seed 0 --device cuda | tail -n 2
cp /tmp/lora-ddp.json $OUT/lora-ddp.json
python3 - <<'PY'
import json, os
out = os.environ.get("OUT", "/tmp/device-out")
for name in ("pretrain-cuda", "pretrain-cpu", "lora-cuda", "lora-cpu", "lora-ddp"):
    try:
        r = json.load(open(f"{out}/{name}.json"))
    except Exception as e:
        print(name, "no report:", e); continue
    keep = ("torch", "device", "worldSize", "stepsDone", "tokensPerSecond", "seconds", "heldoutLoss", "loss")
    print(name, {k: r[k] for k in keep if k in r and not isinstance(r[k], (dict, list))})
PY
echo "trainer part: $(( $(date +%s) - T0 )) s"

echo "== llama.cpp: CUDA build (sm_90) of node-llama-cpp's bundled source"
mkdir -p /tmp/llama && tar xJf $D/llama-src.tar.xz -C /tmp/llama
B0=$(date +%s)
cmake -S /tmp/llama -B /tmp/llama/build -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=Release > /tmp/cmake.log 2>&1 \
  || { tail -20 /tmp/cmake.log; exit 1; }
timeout 300 cmake --build /tmp/llama/build -j 16 -t llama-bench llama-server > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build: $(( $(date +%s) - B0 )) s"
BIN=/tmp/llama/build/bin
echo "== llama-bench: demo base, CPU (16 threads) vs all layers on the GPU"
$BIN/llama-bench -m resources/demo/base.gguf -ngl 0,99 -t 16 -p 512 -n 128 -r 3 -o json > $OUT/llama-bench.json 2>/tmp/bench.err \
  || tail -5 /tmp/bench.err
python3 - <<'PY'
import json, os
for r in json.load(open(os.environ.get("OUT", "/tmp/device-out") + "/llama-bench.json")):
    print("ngl", r["n_gpu_layers"], "p", r["n_prompt"], "n", r["n_gen"], "t/s", round(r["avg_ts"], 1))
PY
echo "== llama-server: 4 LoRA adapters loaded once, switched per request"
ARGS=(); for a in chat coding agent ui; do ARGS+=(--lora resources/demo/adapters/$a.gguf); done
$BIN/llama-server -m resources/demo/base.gguf "${ARGS[@]}" --lora-init-without-apply -ngl 99 --parallel 4 \
  -c 8192 --port 18080 > /tmp/server.log 2>&1 &
SP=$!
python3 bench/device/swap.py http://127.0.0.1:18080 > $OUT/swap.json || tail -20 /tmp/server.log
cat $OUT/swap.json
kill $SP
echo "total: $(( $(date +%s) - T0 )) s"
