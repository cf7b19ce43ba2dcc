/**
 * `npx tsx bench/device/prep.ts [--out .dev]`: the inputs of bench/device/run.sh, the trainer and
 * llama.cpp measured on a GPU machine that has PyTorch and CUDA but no Node.js (so the
 * tokenizing, which needs node-llama-cpp, happens here):
 *   init.gguf               the untrained demo base (native/gguf/demo-base.ts)
 *   pretrain.tok.jsonl      resources/training/pretrain.jsonl tokenized for it
 *   coding.tok.jsonl        resources/training/coding.train.jsonl tokenized for the demo base
 *   coding.heldout.tok.jsonl
 *   llama-src.tar.xz        node-llama-cpp's llama.cpp source (its git bundle checked out; no
 *                           models, docs, examples or tests), built there with CUDA
 * Keep the folder out of git (`echo /.dev/ >> .git/info/exclude`) and name it in the run's carry.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { readDatasetFile } from "../../cloud/training/dataset-file";
import { tokenizeDataset } from "../../cloud/training/tokenize-dataset";
import { demoBaseInitSpec } from "../../native/gguf/demo-base";
import { writeGguf } from "../../native/gguf/writer";

const ROOT = resolve(import.meta.dirname, "../..");
const TRAINING = join(ROOT, "resources/training");

async function main() {
  const { values } = parseArgs({ options: { out: { type: "string", default: ".dev" } } });
  const out = resolve(values.out);
  await mkdir(out, { recursive: true });
  const init = join(out, "init.gguf");
  await writeGguf(init, demoBaseInitSpec());
  const pretrain = await tokenizeDataset(
    init,
    await readDatasetFile(join(TRAINING, "pretrain.jsonl")),
    null,
    {
      domain: "chat",
      method: "sft",
      maxLength: 2048,
      maxLengthPolicy: "drop",
      trainOut: join(out, "pretrain.tok.jsonl"),
      heldoutOut: join(out, "pretrain.heldout.tok.jsonl"),
    },
  );
  console.log(`pretrain: ${pretrain.dataset.examples} examples, ${pretrain.tokens} tokens`);
  const coding = await tokenizeDataset(
    join(ROOT, "resources/demo/base.gguf"),
    await readDatasetFile(join(TRAINING, "coding.train.jsonl")),
    await readDatasetFile(join(TRAINING, "coding.heldout.jsonl")),
    {
      domain: "coding",
      method: "sft",
      maxLength: 2048,
      maxLengthPolicy: "drop",
      trainOut: join(out, "coding.tok.jsonl"),
      heldoutOut: join(out, "coding.heldout.tok.jsonl"),
    },
  );
  console.log(`coding: ${coding.dataset.examples} examples, ${coding.tokens} tokens`);
  const src = await mkdtemp(join(tmpdir(), "macaron-llama-src-"));
  try {
    execFileSync("git", [
      "clone",
      "-q",
      join(ROOT, "node_modules/node-llama-cpp/llama/gitRelease.bundle"),
      src,
    ]);
    const skip = [
      "./models",
      "./docs",
      "./media",
      "./examples",
      "./gguf-py",
      "./tools/server/webui",
      "./tests",
    ];
    const excludes = [".git", ...skip].map((p) => `--exclude=${p}`);
    execFileSync("tar", ["cJf", join(out, "llama-src.tar.xz"), ...excludes, "."], { cwd: src });
  } finally {
    await rm(src, { recursive: true, force: true });
  }
}

await main();
