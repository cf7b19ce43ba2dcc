import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { suiteDir } from "../../testing/core/temp-dir";
import { writeWrongBaseAdapter } from "../../native/gguf/adapters";
import { tinyModelSpec } from "../../native/gguf/tiny-model";
import { tinyQwenSpec } from "../../native/gguf/tiny-qwen";
import { gv, writeGguf } from "../../native/gguf/writer";
import { countingExamples, sftLine } from "../../testing/cloud/trainer/datasets";
import { dataFile, errorEvent, train, writeBase } from "../../testing/cloud/trainer/fixtures";
import { assertTorchAvailable, eventsNamed, runTrainer } from "../../testing/cloud/trainer/trainer-process";

/** Every failure ends as one error event with the spec's code, a clear message and exit code. */

const tmp = suiteDir("macaron-trainer-errors-");
let base: string;
let good: string;

beforeAll(async () => {
  base = await writeBase(tmp.path);
  good = await dataFile(tmp.path, "good", countingExamples(8));
});

beforeEach(() => void assertTorchAvailable());

async function expectError(
  run: Promise<{ code: number | null; events: { event: string }[]; out?: string }>,
  code: string,
  message: RegExp,
  exitCode = 1,
) {
  const result = await run;
  const error = errorEvent(result as never);
  expect(error, JSON.stringify(result.events)).toMatchObject({ code });
  expect(error!.message).toMatch(message);
  expect(result.code).toBe(exitCode);
  expect(eventsNamed(result as never, "done")).toHaveLength(0);
  if (result.out) expect(existsSync(result.out)).toBe(false);
}

describe("bad data", () => {
  it("an empty file is empty_data", async () => {
    const data = await dataFile(tmp.path, "empty", ["", "  "]);
    await expectError(train(tmp.path, "x", { base, data }), "empty_data", /has no examples/);
  });

  it("a malformed line is bad_data naming the line", async () => {
    const data = await dataFile(tmp.path, "malformed", [
      ...countingExamples(2),
      '{"kind":"sft","ids":[1,2',
    ] as const);
    await expectError(
      train(tmp.path, "x", { base, data }),
      "bad_data",
      /malformed\.jsonl line 3: malformed JSON/,
    );
  });

  it("ids outside the vocabulary, a bad start or the wrong kind are bad_data", async () => {
    const cases: [string, object, RegExp][] = [
      ["vocab", sftLine([1, 2, 300], 1), /line 2: token id 300 .* outside the vocabulary \(0\.\.258\)/],
      ["start", sftLine([1, 2, 3], 3), /line 2: "start" must be an integer with 1 <= start < 3/],
      [
        "kind",
        { kind: "dpo", prompt: [1], chosen: [2], rejected: [3] },
        /line 2: kind 'dpo' is not accepted/,
      ],
    ];
    for (const [name, line, message] of cases) {
      const data = await dataFile(tmp.path, name, [countingExamples(1)[0]!, line]);
      await expectError(train(tmp.path, "x", { base, data }), "bad_data", message);
    }
  });

  it("a missing data file is bad_data", async () => {
    await expectError(
      train(tmp.path, "x", { base, data: join(tmp.path, "nope.jsonl") }),
      "bad_data",
      /does not exist/,
    );
  });
});

describe("bad base and parent", () => {
  it("refuses a base without a required key, of another architecture, or that is an adapter", async () => {
    const spec = tinyModelSpec("tiny");
    const noLayers = join(tmp.path, "no-layers.gguf");
    const { ["llama.block_count"]: _dropped, ...metadata } = spec.metadata;
    void _dropped;
    await writeGguf(noLayers, { ...spec, metadata });
    await expectError(
      train(tmp.path, "x", { base: noLayers, data: good }),
      "bad_base",
      /llama\.block_count is missing/,
    );

    const gpt2 = join(tmp.path, "gpt2.gguf");
    await writeGguf(gpt2, {
      ...spec,
      metadata: { ...spec.metadata, "general.architecture": gv.str("gpt2") },
    });
    await expectError(
      train(tmp.path, "x", { base: gpt2, data: good }),
      "bad_base",
      /general\.architecture is 'gpt2'/,
    );

    const adapter = await writeWrongBaseAdapter(join(tmp.path, "adapter-as-base.gguf"));
    await expectError(
      train(tmp.path, "x", { base: adapter, data: good }),
      "bad_base",
      /adapter|general\.type/,
    );
  });

  it("refuses experts outside qwen3moe, a qwen3moe without experts, and a qwen3 parent on qwen3moe", async () => {
    const spec = tinyModelSpec("tiny");
    const llamaMoe = join(tmp.path, "llama-moe.gguf");
    await writeGguf(llamaMoe, { ...spec, metadata: { ...spec.metadata, "llama.expert_count": gv.u32(4) } });
    await expectError(
      train(tmp.path, "x", { base: llamaMoe, data: good }),
      "bad_base",
      /llama\.expert_count > 0 \(mixture of experts\) is supported for qwen3moe only/,
    );
    const moe = tinyQwenSpec("qwen3moe");
    const noExperts = join(tmp.path, "moe-no-experts.gguf");
    const { ["qwen3moe.expert_count"]: _experts, ...withoutExperts } = moe.metadata;
    void _experts;
    await writeGguf(noExperts, { ...moe, metadata: withoutExperts });
    await expectError(
      train(tmp.path, "x", { base: noExperts, data: good }),
      "bad_base",
      /qwen3moe\.expert_count is missing \(qwen3moe is a MoE model\)/,
    );
    const moeBase = join(tmp.path, "qwen3moe.gguf");
    await writeGguf(moeBase, moe);
    const qwen3Base = join(tmp.path, "qwen3.gguf");
    await writeGguf(qwen3Base, tinyQwenSpec("qwen3"));
    const made = await train(tmp.path, "qwen3-parent", {
      base: qwen3Base,
      data: good,
      flags: ["--steps", "1"],
    });
    expect(made.code).toBe(0);
    await expectError(
      train(tmp.path, "x", { base: moeBase, data: good, flags: ["--from", made.out] }),
      "bad_parent",
      /adapter architecture 'qwen3' != base 'qwen3moe'/,
    );
    // Only the experts' MLP as targets: a MoE base has none of those layers.
    await expectError(
      train(tmp.path, "x", { base: moeBase, data: good, flags: ["--targets", "ffn_gate,ffn_up"] }),
      "bad_args",
      /none of the targets ffn_gate,ffn_up is in this base model; it has attn_k,attn_output,attn_q,attn_v,ffn_gate_inp,output/,
      2,
    );
  });

  it("refuses a parent adapter made for another base (bad_parent)", async () => {
    const parent = await writeWrongBaseAdapter(join(tmp.path, "wrong-parent.gguf"));
    await expectError(
      train(tmp.path, "x", { base, data: good, flags: ["--from", parent] }),
      "bad_parent",
      /output\.weight LoRA shapes .* do not fit the base weight/,
    );
  });
});

describe("failures during training", () => {
  it("a NaN loss stops with nan_loss, writes no adapter and keeps the last good checkpoint", async () => {
    const run = await train(tmp.path, "nan", {
      base,
      data: good,
      flags: ["--steps", "10", "--lr", "1e30", "--checkpoint-every", "1"],
    });
    await expectError(Promise.resolve(run), "nan_loss", /loss became nan at step \d+.*last good checkpoint/);
    expect(readdirSync(`${run.out}.ckpt`).filter((n) => n.endsWith(".pt")).length).toBe(1);
    expect(existsSync(run.report)).toBe(false);
  });

  it("a full disk is disk_full and leaves no partial adapter (ENOSPC simulated by a test-only hook)", async () => {
    const run = await train(tmp.path, "full", {
      base,
      data: good,
      flags: ["--steps", "2"],
      env: { MACARON_TRAINER_FAKE_ENOSPC: "full.gguf" },
    });
    await expectError(Promise.resolve(run), "disk_full", /no space left on the device writing .*full\.gguf/);
    expect(readdirSync(tmp.path).filter((n) => n.includes("full.gguf") && n.endsWith(".tmp"))).toEqual([]);
  });

  it("bad arguments exit 2 with bad_args", async () => {
    await expectError(
      runTrainer(["train", "--base", base]),
      "bad_args",
      /required: --data, --out, --report/,
      2,
    );
    await expectError(
      runTrainer([
        "train",
        ...["--base", base, "--data", good, "--out", "o", "--report", "r"],
        "--targets",
        "attn_x",
      ]),
      "bad_args",
      /unknown target\(s\) attn_x/,
      2,
    );
  });
});
