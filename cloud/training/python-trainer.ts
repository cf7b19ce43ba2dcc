/**
 * Runs the Python LoRA trainer (cloud/trainer/macaron_trainer) and reads its JSON-line events.
 * The interpreter is `MACARON_PYTHON`, else /usr/bin/python3 when it exists (Debian's
 * python3-torch lives there), else `python3` on PATH; it must import torch and numpy. With more
 * than one process the trainer runs under torchrun.
 */
import { execFile, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, resolve } from "node:path";
import { z } from "zod";
import { describeIssues } from "../../common/zod-issues";
import { TrainError, type TrainErrorCode } from "./train-error";

/** The folder holding the macaron_trainer package (what PYTHONPATH must include). */
export const TRAINER_ROOT = resolve(import.meta.dirname, "../trainer");
const SYSTEM_PYTHON = "/usr/bin/python3";
/** Trainer stderr kept for the message when it dies without an error event. */
const STDERR_TAIL_CHARS = 4000;

/**
 * The trainer's stdout events (the shared trainer CLI interface; macaron_trainer/events.py
 * writes them, one JSON object a line, non-finite numbers as null). runTrainer parses each:
 * one that is JSON but not one of these is logged and dropped, never passed on.
 */
const TrainerEventSchema = z.discriminatedUnion("event", [
  z.object({
    event: z.literal("start"),
    examples: z.number(),
    heldoutExamples: z.number(),
    steps: z.number(),
    trainableParams: z.number(),
    device: z.string(),
    worldSize: z.number(),
    torch: z.string(),
    trainer: z.string(),
    /** Present when the run went on from a checkpoint. */
    resumedFromStep: z.number().optional(),
    /** GRPO: the training groups, and those whose rewards are all equal (no signal, left out). */
    groups: z.number().optional(),
    zeroVarianceGroups: z.number().optional(),
  }),
  z.object({
    event: z.literal("progress"),
    step: z.number(),
    steps: z.number(),
    epoch: z.number(),
    loss: z.number().nullable(),
    tokensPerSecond: z.number(),
    etaSeconds: z.number(),
    /** GRPO: the policy-gradient and KL terms per completion token (loss = policyLoss + β·kl). */
    policyLoss: z.number().nullable().optional(),
    kl: z.number().nullable().optional(),
  }),
  z.object({ event: z.literal("checkpoint"), step: z.number(), path: z.string() }),
  z.object({ event: z.literal("heldout"), step: z.number(), loss: z.number().nullable() }),
  z.object({ event: z.literal("done"), adapter: z.string(), report: z.string() }),
  z.object({ event: z.literal("error"), code: z.string(), message: z.string() }),
]);
export type TrainerEvent = z.infer<typeof TrainerEventSchema>;

export interface TrainerCommand {
  command: string;
  args: string[];
}

/** The interpreter to run the trainer with (see the module comment). */
export function locatePython(env: NodeJS.ProcessEnv = process.env, exists = existsSync): string {
  const override = env.MACARON_PYTHON?.trim();
  if (override) return override;
  return exists(SYSTEM_PYTHON) ? SYSTEM_PYTHON : "python3";
}

const TORCH_PROBE = "import torch, numpy; print(torch.__version__)";

function noPython(python: string, why: string): TrainError {
  return new TrainError(
    "no_python",
    `Cannot run Python (${python}): ${why}. Install Python 3 with PyTorch (Debian/Ubuntu: ` +
      "sudo apt-get install python3-torch), or set MACARON_PYTHON to a Python that has it.",
  );
}

function noTorch(python: string, stderr: string): TrainError {
  const why = stderr.trim().split("\n").at(-1) ?? "";
  return new TrainError(
    "no_torch",
    `PyTorch is not installed for ${python} (${why}). Install it (Debian/Ubuntu: sudo apt-get install ` +
      "python3-torch), or set MACARON_PYTHON to a Python that has torch and numpy.",
  );
}

/**
 * torch's version as `python` sees it. Throws TrainError "no_python" when the interpreter does
 * not run, "no_torch" when it has no torch (with how to install it). Blocks for the second
 * importing torch takes: see probeTorch to do other work meanwhile.
 */
export function checkTorch(python: string): string {
  const probe = spawnSync(python, ["-c", TORCH_PROBE], { encoding: "utf8", env: torchProbeEnv() });
  if (probe.error) throw noPython(python, probe.error.message);
  if (probe.status !== 0) throw noTorch(python, probe.stderr);
  return probe.stdout.trim();
}

/** checkTorch without blocking: resolves with torch's version, rejects with the same errors. */
export function probeTorch(python: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      python,
      ["-c", TORCH_PROBE],
      { env: torchProbeEnv(), encoding: "utf8" },
      (error, stdout, stderr) => {
        if (!error) resolvePromise(stdout.trim());
        // A numeric code: Python ran and failed; otherwise it did not start (ENOENT, EACCES).
        else
          reject(typeof error.code === "number" ? noTorch(python, stderr) : noPython(python, error.message));
      },
    );
  });
}

function torchProbeEnv(): NodeJS.ProcessEnv {
  return { ...process.env, PYTHONDONTWRITEBYTECODE: "1" };
}

/**
 * The command line that runs `macaron_trainer <args>`: `python -m macaron_trainer` for one
 * process; for `nproc` > 1 torchrun, one process per rank on this machine. torchrun is started
 * as `python -m macaron_trainer.torchrun`: the chosen interpreter's own torch.distributed.run,
 * with the fix torch 1.13 needs on Python 3.11 (there /usr/bin/torchrun and
 * `python -m torch.distributed.run` fail before starting a worker; see that module).
 */
export function trainerCommand(python: string, nproc: number, args: readonly string[]): TrainerCommand {
  if (nproc <= 1) return { command: python, args: ["-m", "macaron_trainer", ...args] };
  // --standalone: a free rendezvous port on localhost, so two runs never collide.
  const launch = ["--standalone", "--nproc_per_node", String(nproc), "-m", "macaron_trainer", ...args];
  return { command: python, args: ["-m", "macaron_trainer.torchrun", ...launch] };
}

export interface RunTrainerOptions {
  python: string;
  nproc: number;
  /** The subcommand and its options, e.g. ["train", "--base", …]. */
  args: string[];
  onEvent: (event: TrainerEvent) => void;
  /** Each human-readable stderr line of the trainer. */
  onLog?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}

const TRAINER_CODES = new Set<string>([
  "bad_base",
  "bad_data",
  "empty_data",
  "bad_parent",
  "nan_loss",
  "disk_full",
  "bad_args",
  "internal",
]);

function asCode(code: string): TrainErrorCode {
  return TRAINER_CODES.has(code) ? (code as TrainErrorCode) : "internal";
}

/** Calls `onLine` with every complete line of a stream. */
function lines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let buffer = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      onLine(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
    }
  });
  stream.on("end", () => {
    if (buffer) onLine(buffer);
  });
}

/**
 * Runs the trainer to its end and returns its "done" event. Its "error" event becomes a
 * TrainError with the trainer's code and message; dying without one, a "trainer_failed" error
 * with the end of its stderr; an aborted `signal` kills it ("aborted").
 */
export function runTrainer(options: RunTrainerOptions): Promise<Extract<TrainerEvent, { event: "done" }>> {
  const { command, args } = trainerCommand(options.python, options.nproc, options.args);
  const env = options.env ?? process.env;
  const pythonPath = [TRAINER_ROOT, env.PYTHONPATH].filter(Boolean).join(delimiter);
  const child = spawn(command, args, {
    env: {
      ...env,
      PYTHONPATH: pythonPath,
      PYTHONDONTWRITEBYTECODE: "1",
      PYTHONUNBUFFERED: "1",
      // The trainer ends itself when this process is gone (parent_watch.py): no orphan holds the cores.
      MACARON_PARENT_PID: String(process.pid),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let done: Extract<TrainerEvent, { event: "done" }> | null = null;
  let error: TrainError | null = null;
  /** The first event that could not be read, for the failure's message. */
  let malformed: string | null = null;
  let stderrTail = "";
  lines(child.stdout, (line) => {
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      raw = undefined;
    }
    if (typeof raw !== "object" || raw === null || !("event" in raw)) {
      // Not an event (a library printing to stdout): a log line like the stderr ones.
      options.onLog?.(line);
      return;
    }
    const parsed = TrainerEventSchema.safeParse(raw);
    if (!parsed.success) {
      // A trainer of another version, or a bug: a consumer would read fields that are not there.
      const problem = `The trainer sent a malformed event (${describeIssues(parsed.error)}): ${line.slice(0, 200)}`;
      malformed ??= problem;
      options.onLog?.(problem);
      return;
    }
    const event = parsed.data;
    if (event.event === "error") error ??= new TrainError(asCode(event.code), event.message);
    else if (event.event === "done") done = event;
    options.onEvent(event);
  });
  lines(child.stderr, (line) => {
    stderrTail = (stderrTail + line + "\n").slice(-STDERR_TAIL_CHARS);
    options.onLog?.(line);
  });
  const abort = () => child.kill("SIGTERM");
  options.signal?.addEventListener("abort", abort, { once: true });
  return new Promise((resolvePromise, reject) => {
    child.on("error", (err) => {
      reject(new TrainError("no_python", `Cannot start the trainer (${command}): ${err.message}`));
    });
    child.on("close", (code, signal) => {
      options.signal?.removeEventListener("abort", abort);
      if (options.signal?.aborted) reject(new TrainError("aborted", "Training was cancelled."));
      else if (error) reject(error);
      else if (code === 0 && done) resolvePromise(done);
      else {
        const how = signal ? `was killed (${signal})` : `exited with code ${String(code)}`;
        const tail = stderrTail.trim();
        const also = malformed ? `\n${malformed}` : "";
        reject(new TrainError("trainer_failed", `The trainer ${how}${tail ? `:\n${tail}` : "."}${also}`));
      }
    });
  });
}
