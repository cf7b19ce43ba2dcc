import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Runs the Python trainer (`python -m macaron_trainer`) for tests: the interpreter is
 * /usr/bin/python3 (Debian's python3-torch) unless MACARON_PYTHON names another, with
 * PYTHONPATH=cloud/trainer and one torch thread.
 */

export const TRAINER_ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../../cloud/trainer");
export const PYTHON = process.env.MACARON_PYTHON ?? "/usr/bin/python3";

/** One stdout event of the trainer. */
export interface TrainerEvent {
  readonly event: string;
  readonly [key: string]: unknown;
}

export interface TrainerRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly events: TrainerEvent[];
  readonly stderr: string;
}

/** The environment the trainer runs in: PYTHONPATH set, one thread everywhere. */
export function trainerEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PYTHONPATH: TRAINER_ROOT,
    OMP_NUM_THREADS: "1",
    MKL_NUM_THREADS: "1",
    PYTHONDONTWRITEBYTECODE: "1",
    ...extra,
  };
}

let torchProbe: { version?: string; error?: string } | undefined;

/**
 * Throws a clear error when the interpreter has no torch: CI installs python3-torch, so a
 * missing torch is a broken setup the tests must report as failures, not skip. Call it in
 * beforeEach (probed once per file), so every test fails rather than being reported skipped.
 */
export function assertTorchAvailable(): string {
  if (!torchProbe) {
    const probe = spawnSync(PYTHON, ["-c", "import torch, numpy; print(torch.__version__)"], {
      encoding: "utf8",
      env: trainerEnv(),
    });
    torchProbe =
      probe.status === 0
        ? { version: probe.stdout.trim() }
        : { error: probe.error?.message ?? probe.stderr.trim().split("\n").at(-1) };
  }
  if (torchProbe.error !== undefined) {
    throw new Error(
      `PyTorch is not importable by ${PYTHON} (install Debian's python3-torch, or set MACARON_PYTHON ` +
        `to a Python with torch and numpy): ${torchProbe.error}`,
    );
  }
  return torchProbe.version!;
}

function parseEvents(stdout: string): TrainerEvent[] {
  return stdout
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as TrainerEvent);
}

/**
 * Spawns `python -m macaron_trainer ...args` (or `torchrun ... -m macaron_trainer` when
 * `command` is given) and calls `onEvent` for every stdout event as it arrives.
 */
export function startTrainer(
  args: readonly string[],
  options: {
    env?: NodeJS.ProcessEnv;
    command?: readonly string[];
    onEvent?: (event: TrainerEvent, child: ChildProcess) => void;
  } = {},
): Promise<TrainerRun> {
  const [program, ...prefix] = options.command ?? [PYTHON, "-m", "macaron_trainer"];
  const child = spawn(program!, [...prefix, ...args], { env: trainerEnv(options.env), stdio: "pipe" });
  const events: TrainerEvent[] = [];
  let pending = "";
  let stderr = "";
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const event of parseEvents(lines.join("\n"))) {
      events.push(event);
      options.onEvent?.(event, child);
    }
  });
  child.stderr.on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      events.push(...parseEvents(pending));
      resolve({ code, signal, events, stderr });
    });
  });
}

/** Runs the trainer to the end and returns its exit status, events and stderr. */
export function runTrainer(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<TrainerRun> {
  return startTrainer(args, { env });
}

/** The events named `name`. */
export function eventsNamed(run: TrainerRun, name: string): TrainerEvent[] {
  return run.events.filter((e) => e.event === name);
}

/** The single `done` event, or a thrown error with the trainer's output when it failed. */
export function expectDone(run: TrainerRun): TrainerEvent {
  const done = eventsNamed(run, "done")[0];
  if (run.code !== 0 || !done) {
    throw new Error(
      `trainer exited ${run.code ?? run.signal}:\n${JSON.stringify(run.events.slice(-3))}\n${run.stderr}`,
    );
  }
  return done;
}

/** Raw next-token logits at every position of each sequence, from one `macaron_trainer logits`. */
export async function trainerLogitsMany(
  base: string,
  sequences: readonly (readonly number[])[],
  adapter?: { path: string; scale: number },
  opts: { llamaCpuRounding?: boolean } = {},
): Promise<number[][][]> {
  const args = ["logits", "--base", base, ...sequences.flatMap((tokens) => ["--tokens", tokens.join(",")])];
  if (adapter) args.push("--adapter", adapter.path, "--scale", String(adapter.scale));
  // llama.cpp's CPU rounding of activations to 8 bits (quantized bases; see the quantized tests).
  if (opts.llamaCpuRounding) args.push("--llama-cpu-rounding");
  const run = await runTrainer(args);
  const events = eventsNamed(run, "logits");
  if (run.code !== 0 || events.length !== sequences.length) {
    throw new Error(`logits failed (${run.code}): ${run.stderr}`);
  }
  return events.map((e) => e.logits as number[][]);
}

/** Raw next-token logits at every position from `macaron_trainer logits`. */
export async function trainerLogits(
  base: string,
  tokens: readonly number[],
  adapter?: { path: string; scale: number },
  opts: { llamaCpuRounding?: boolean } = {},
): Promise<number[][]> {
  return (await trainerLogitsMany(base, [tokens], adapter, opts))[0]!;
}
