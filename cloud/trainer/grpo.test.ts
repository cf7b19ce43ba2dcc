import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { suiteDir } from "../../testing/core/temp-dir";
import { bytes, chatPrompt, IM_END } from "../../testing/cloud/trainer/datasets";
import {
  dataFile,
  errorEvent,
  losses,
  readReport,
  train,
  writeBase,
} from "../../testing/cloud/trainer/fixtures";
import {
  assertTorchAvailable,
  eventsNamed,
  expectDone,
  PYTHON,
  startTrainer,
  trainerLogitsMany,
} from "../../testing/cloud/trainer/trainer-process";

/**
 * `train --method grpo` (issue 29): policy gradient with group-relative advantages on fixed
 * sampled groups, the KL to the reference (the base, or the parent adapter) weighted by --beta.
 * On the tiny demo base a few steps make the high-reward completions of held-out groups (animals
 * the training groups never named) likelier than the low-reward ones; a group whose rewards are
 * all equal changes nothing; a lone answer measured against a stated baseline (a user's failed
 * trajectory) is trained away from; the KL term is zero at step 0; malformed groups are refused.
 */

const tmp = suiteDir("macaron-grpo-");
let base: string;

const ANIMALS = ["cat", "dog", "fish", "bird", "frog", "lion", "bear", "wolf", "duck", "goat"];
const HELDOUT_ANIMALS = ["owl", "ant", "cow", "pig", "fox", "elk"];

interface Group {
  kind: "grpo";
  prompt: number[];
  completions: number[][];
  rewards: number[];
}

/** "Say <animal>": echoing it is worth 1, half an echo 0.5, a refusal or a shrug 0. */
function group(animal: string, rewards = [1, 0.5, 0, 0]): Group {
  return {
    kind: "grpo",
    prompt: chatPrompt(`Say ${animal}`),
    completions: [`${animal}!`, `A ${animal}?`, "No.", "Hm."].map((t) => [...bytes(t), IM_END]),
    rewards,
  };
}

const trainingGroups = (n: number): Group[] => Array.from({ length: n }, (_, i) => group(ANIMALS[i % 10]!));

/** Mean log-prob per token of every completion of `groups`, group by group (one trainer run). */
async function meanLogProbs(groups: Group[], adapter?: string): Promise<number[][]> {
  const sequences = groups.flatMap((g) => g.completions.map((c) => [...g.prompt, ...c]));
  const logits = await trainerLogitsMany(base, sequences, adapter ? { path: adapter, scale: 1 } : undefined);
  let s = 0;
  return groups.map((g) =>
    g.completions.map((c) => {
      const row = logits[s++]!;
      let total = 0;
      for (let i = 0; i < c.length; i++) {
        const r = row[g.prompt.length + i - 1]!;
        const max = Math.max(...r);
        total += r[c[i]!]! - (max + Math.log(r.reduce((acc, x) => acc + Math.exp(x - max), 0)));
      }
      return total / c.length;
    }),
  );
}

/** Mean log-prob per token of the reward-1 completions minus that of the reward-0 ones, over `groups`. */
async function rewardGap(groups: Group[], adapter?: string): Promise<number> {
  const all = await meanLogProbs(groups, adapter);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const gaps = groups.map((g, k) => {
    const lp = all[k]!;
    return mean(lp.filter((_, i) => g.rewards[i] === 1)) - mean(lp.filter((_, i) => g.rewards[i] === 0));
  });
  return mean(gaps);
}

const GRPO = ["--method", "grpo", "--steps", "16", "--batch-size", "4", "--beta", "0.1"];

beforeAll(async () => {
  base = await writeBase(tmp.path);
});

beforeEach(() => void assertTorchAvailable());

describe("train --method grpo", () => {
  it("makes held-out high-reward completions likelier than low-reward ones; KL 0 at step 0", async () => {
    const data = await dataFile(tmp.path, "grpo", trainingGroups(16));
    const heldoutGroups = HELDOUT_ANIMALS.map((a) => group(a));
    const heldout = await dataFile(tmp.path, "grpo-heldout", heldoutGroups);
    const run = await train(tmp.path, "grpo", { base, data, flags: [...GRPO, "--heldout", heldout] });
    expectDone(run);
    expect(eventsNamed(run, "start")[0]).toMatchObject({ examples: 16, groups: 16, zeroVarianceGroups: 0 });
    const progress = eventsNamed(run, "progress");
    expect(progress).toHaveLength(16);
    // The policy is the reference before the first update: the KL term is exactly 0.
    expect(progress[0]!.kl).toBe(0);
    expect(progress[0]!.loss).toBe(progress[0]!.policyLoss);
    expect(progress.slice(1).some((e) => (e.kl as number) > 0)).toBe(true);

    const before = await rewardGap(heldoutGroups);
    const after = await rewardGap(heldoutGroups, run.out);
    const report = readReport(run.report) as unknown as {
      method: string;
      hyperparameters: Record<string, unknown>;
      groups: { training: { groups: number; zeroVariance: number } };
      heldout: { preferenceAccuracyBefore: number; preferenceAccuracyAfter: number };
    };
    console.log(
      `GRPO held-out: mean log-prob gap (reward 1 − reward 0) ${before.toFixed(3)} -> ${after.toFixed(3)}; ` +
        `pairwise accuracy ${report.heldout.preferenceAccuracyBefore} -> ${report.heldout.preferenceAccuracyAfter}`,
    );
    expect(after).toBeGreaterThan(before + 0.5);
    expect(report.method).toBe("grpo");
    expect(report.hyperparameters).toMatchObject({ beta: 0.1, clip: 0.2 });
    expect(report.groups.training).toEqual({ groups: 16, zeroVariance: 0 });
    // Pairs of a group ordered by mean log-prob as by reward: not lower (the base orders most already).
    expect(report.heldout.preferenceAccuracyAfter).toBeGreaterThanOrEqual(
      report.heldout.preferenceAccuracyBefore,
    );

    // Continuing from it: the reference is the parent as it was, so the KL is 0 again at step 0.
    const child = await train(tmp.path, "grpo-child", { base, data, flags: [...GRPO, "--from", run.out] });
    expectDone(child);
    expect(eventsNamed(child, "progress")[0]!.kl).toBe(0);
    expect(readReport(child.report).parent).toMatchObject({ path: run.out });
  });

  it("a group whose rewards are all equal changes nothing, and is said to carry no signal", async () => {
    const groups = trainingGroups(8);
    const plain = await dataFile(tmp.path, "grpo-plain", groups);
    const flat = [group("cat", [0, 0, 0, 0]), group("dog", [1, 1, 1, 1]), group("owl", [0.5, 0.5, 0.5, 0.5])];
    const mixed = await dataFile(tmp.path, "grpo-mixed", [
      flat[0]!,
      ...groups.slice(0, 4),
      flat[1]!,
      ...groups.slice(4),
      flat[2]!,
    ]);
    const flags = [...GRPO.slice(0, 2), "--steps", "6", "--batch-size", "4"];
    const a = await train(tmp.path, "grpo-plain", { base, data: plain, flags });
    const b = await train(tmp.path, "grpo-mixed", { base, data: mixed, flags });
    expectDone(a);
    expectDone(b);
    expect(eventsNamed(b, "start")[0]).toMatchObject({ examples: 8, groups: 11, zeroVarianceGroups: 3 });
    expect(b.stderr).toMatch(
      /3 of 11 training groups have rewards that are all equal \(no signal\): left out/,
    );
    expect(losses(b)).toEqual(losses(a));
    expect(readFileSync(b.out).equals(readFileSync(a.out))).toBe(true);

    // Nothing but such groups: nothing to learn, no adapter.
    const none = await dataFile(tmp.path, "grpo-flat", flat);
    const c = await train(tmp.path, "grpo-flat", { base, data: none, flags });
    expect(c.code).toBe(1);
    expect(errorEvent(c)).toMatchObject({ code: "empty_data" });
    expect(errorEvent(c)!.message).toMatch(/every one of the 3 groups .* all equal: GRPO has no signal/);
  });

  it("a lone answer with a baseline (a user's trajectory): a failure is made less likely, a success likelier", async () => {
    // Users' trajectories with nothing to compare with in their group (cloud/prepare/groups.ts):
    // A = reward − baseline, so a lone failure's advantage is −0.5 and its answer is trained away from.
    const lone = (answer: string, reward: number) => ({
      kind: "grpo" as const,
      prompt: chatPrompt("Say cat"),
      completions: [[...bytes(answer), IM_END]],
      rewards: [reward],
      baseline: 0.5,
    });
    const flags = ["--method", "grpo", "--steps", "3", "--batch-size", "1", "--warmup", "0", "--beta", "0.1"];
    const cases = [
      ["grpo-lone-negative", lone("No.", 0)],
      ["grpo-lone-positive", lone("cat!", 1)],
    ] as const;
    const moved: number[] = [];
    for (const [name, line] of cases) {
      const run = await train(tmp.path, name, { base, data: await dataFile(tmp.path, name, [line]), flags });
      expectDone(run);
      expect(eventsNamed(run, "start")[0]).toMatchObject({ examples: 1, groups: 1, zeroVarianceGroups: 0 });
      const before = (await meanLogProbs([line]))[0]![0]!;
      const after = (await meanLogProbs([line], run.out))[0]![0]!;
      moved.push(after - before);
    }
    console.log(
      `GRPO lone answers (baseline 0.5): mean log-prob per token of the failure ${moved[0]!.toFixed(4)}, ` +
        `of the success +${moved[1]!.toFixed(4)}`,
    );
    expect(moved[0]).toBeLessThan(-1e-3);
    expect(moved[1]).toBeGreaterThan(1e-3);

    // A lone answer whose reward is the baseline carries no signal: nothing to learn.
    const flat = await dataFile(tmp.path, "grpo-lone-flat", [lone("Hm.", 0.5)]);
    const none = await train(tmp.path, "grpo-lone-flat", { base, data: flat, flags });
    expect(none.code).toBe(1);
    expect(errorEvent(none)).toMatchObject({ code: "empty_data" });
  });

  it("refuses malformed groups with bad_data naming the line and the fault", async () => {
    const good = JSON.stringify(group("cat"));
    const cases: [string, string, RegExp][] = [
      [
        "one",
        JSON.stringify({ ...group("cat"), completions: [[99, IM_END]], rewards: [1] }),
        /at least 2 completions \(got 1\)/,
      ],
      [
        "nan",
        good.replace('"rewards":[1,0.5,0,0]', '"rewards":[1,NaN,0,0]'),
        /reward 1 \(nan\) is not a finite number/,
      ],
      [
        "inf",
        good.replace('"rewards":[1,0.5,0,0]', '"rewards":[1,0.5,Infinity,0]'),
        /reward 2 \(inf\) is not a finite number/,
      ],
      [
        // Finite, but the mean and variance overflow (OverflowError) or become inf (nan loss).
        "huge",
        JSON.stringify({ ...group("cat"), rewards: [1e308, -1e308, 0, 0] }),
        /reward 0 \(1e\+308\) is out of range: \|reward\| > 1e\+06/,
      ],
      [
        "huge-same",
        JSON.stringify({ ...group("cat"), rewards: [1.7e308, 1.7e308, 0, 0] }),
        /reward 0 \(1\.7e\+308\) is out of range: \|reward\| > 1e\+06/,
      ],
      [
        "text",
        JSON.stringify({ ...group("cat"), rewards: [1, "0.5", 0, 0] }),
        /reward 1 \('0\.5'\) is not a finite number/,
      ],
      [
        "count",
        JSON.stringify({ ...group("cat"), rewards: [1, 0] }),
        /"rewards" must be a list of 4 numbers/,
      ],
      [
        "empty",
        JSON.stringify({ ...group("cat"), completions: [[99], []], rewards: [1, 0] }),
        /"completions\[1\]" needs at least 1 token/,
      ],
      [
        // Completions that called tools carry their loss spans (results left out), one list each.
        "spans-count",
        JSON.stringify({ ...group("cat"), completionSpans: [[[0, 1]]] }),
        /"completionSpans" must be a list of 4 span lists, one per completion/,
      ],
      [
        "spans-range",
        JSON.stringify({ ...group("cat"), completionSpans: [[[0, 1]], [[0, 1]], [[0, 99]], [[0, 1]]] }),
        /completion 2: "spans" must be ascending \[from, to\) pairs within 0\.\.\d+/,
      ],
      [
        // A baseline lets a group hold one completion, never none; it must be a finite number.
        "baseline-none",
        JSON.stringify({ ...group("cat"), completions: [], rewards: [], baseline: 0.5 }),
        /at least 1 completion \(got 0\)/,
      ],
      [
        "baseline-text",
        JSON.stringify({ ...group("cat"), baseline: "0.5" }),
        /baseline \('0\.5'\) is not a finite number/,
      ],
      [
        "kind",
        JSON.stringify({ kind: "dpo", prompt: [1], chosen: [2], rejected: [3] }),
        /kind 'dpo' is not accepted here \(expected grpo\)/,
      ],
    ];
    for (const [name, line, message] of cases) {
      const data = await dataFile(tmp.path, `bad-${name}`, [good, line]);
      const run = await train(tmp.path, `bad-${name}`, { base, data, flags: GRPO });
      expect(run.code, name).toBe(1);
      const error = errorEvent(run);
      expect(error, name).toMatchObject({ code: "bad_data" });
      expect(error!.message, name).toMatch(new RegExp(`bad-${name}\\.jsonl line 2: `));
      expect(error!.message, name).toMatch(message);
    }
  });

  it("resumes after SIGKILL from its checkpoint and ends with the uninterrupted run's adapter", async () => {
    const data = await dataFile(tmp.path, "grpo-resume", trainingGroups(10));
    const flags = ["--method", "grpo", "--steps", "9", "--batch-size", "4", "--checkpoint-every", "3"];
    const whole = await train(tmp.path, "grpo-whole", { base, data, flags });
    expectDone(whole);
    const out = join(tmp.path, "grpo-killed.gguf");
    const args = [
      "train",
      "--base",
      base,
      "--data",
      data,
      "--out",
      out,
      "--report",
      join(tmp.path, "k.json"),
    ];
    const killed = await startTrainer([...args, ...flags], {
      onEvent: (event, child) => void (event.event === "checkpoint" && child.kill("SIGKILL")),
    });
    expect(killed.signal).toBe("SIGKILL");
    const resumed = await startTrainer([...args, ...flags]);
    expectDone(resumed);
    expect(eventsNamed(resumed, "start")[0]).toMatchObject({ resumedFromStep: 3 });
    expect(readFileSync(out).equals(readFileSync(whole.out))).toBe(true);
  });

  it("under torchrun with 2 processes gives the 1-process loss and KL curves", async () => {
    // 9 groups in batches of 4: the third batch has one group, so rank 1 has none there.
    const data = await dataFile(tmp.path, "grpo-nine", trainingGroups(9));
    const args = (name: string) => [
      "train",
      ...["--base", base, "--data", data, "--out", join(tmp.path, `${name}.gguf`)],
      ...[
        "--report",
        join(tmp.path, `${name}.json`),
        "--method",
        "grpo",
        "--steps",
        "7",
        "--batch-size",
        "4",
      ],
    ];
    const one = await startTrainer(args("grpo-one"));
    const two = await startTrainer(args("grpo-two"), {
      command: [
        PYTHON,
        "-m",
        "macaron_trainer.torchrun",
        "--standalone",
        "--nproc_per_node",
        "2",
        "-m",
        "macaron_trainer",
      ],
    });
    expectDone(one);
    expectDone(two);
    const curve = (run: typeof one) =>
      eventsNamed(run, "progress").flatMap((e) => [e.loss as number, e.kl as number]);
    const [a, b] = [curve(one), curve(two)];
    expect(b).toHaveLength(a.length);
    const relative = Math.max(...a.map((x, i) => Math.abs(x - b[i]!) / Math.max(Math.abs(x), 1e-6)));
    console.log(
      `GRPO DDP 2 vs 1 process: max relative difference of loss and KL ${relative.toExponential(2)}`,
    );
    expect(relative).toBeLessThan(1e-4);
  });
});
