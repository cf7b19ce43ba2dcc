/** The command line of `npm run train` (train-cli.ts): usage and parsing into TrainOptions. */
import { parseArgs } from "node:util";
import type { TrainOptions } from "./train-options";
import { TrainError } from "./train-error";

export const USAGE = `Usage: npm run train -- --base FILE.gguf --data FILE.jsonl --out DIR --id ID [options]

  --base FILE.gguf        the base model the adapter is for
  --data FILE.jsonl       chat dataset: {"messages":[…]} or {"prompt","chosen","rejected"} lines
  --out DIR               where ID.gguf and ID.json are written
  --id ID                 adapter id (the model name on /v1)
  --domain D              chat | coding | agent | ui | …; "ui" uses the UI-mode prompt
                          default: the parent's domain, else chat
  --method sft|dpo|grpo   grpo: groups of sampled answers with rewards          default sft
  --from ADAPTER.gguf     continue training this adapter (its rank, alpha and targets)
  --parent-version V      the parent's version (default: from its manifest)
  --version V             default 1.0.0, or the parent's next minor version
  --name N, --description T
  --heldout FILE.jsonl    held-out examples (default: ~10% of --data, split by prompt hash)
  --rank R, --alpha A, --dropout P, --lr X, --beta B (DPO, GRPO's KL), --clip C (GRPO), --seed S
  --epochs N | --steps N  --batch-size B   --targets attn_q,attn_k,…(,output)
  --max-length N          longest example in tokens (default: the base's context)
  --max-length-policy drop|truncate                                             default drop
  --system-prompts mixed|app   training examples under the app's system prompt, none and other
                               clients' prompts (mixed: 1/2, 1/4, 1/4), or the app's only   default app
  --skip-malformed        skip (and count) malformed lines instead of failing
  --nproc N               data-parallel processes (torchrun)                    default 1
  --threads T, --device cpu|cuda|mps|auto (default auto), --max-seconds S, --checkpoint-every N
  --verbose               also print the trainer's log`;

function number(name: string, text: string | undefined, integer: boolean): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === "" || !Number.isFinite(value) || (integer && !Number.isSafeInteger(value)))
    throw new TrainError(
      "bad_args",
      `--${name} must be ${integer ? "an integer" : "a number"}, not "${text}".`,
    );
  return value;
}

function oneOf<T extends string>(
  name: string,
  text: string | undefined,
  allowed: readonly T[],
): T | undefined {
  if (text === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(text))
    throw new TrainError("bad_args", `--${name} must be one of ${allowed.join(", ")}, not "${text}".`);
  return text as T;
}

const STRINGS = [
  "base",
  "data",
  "out",
  "id",
  "domain",
  "method",
  "from",
  "parent-version",
  "version",
  "name",
  "description",
  "heldout",
  "targets",
  "max-length-policy",
  "system-prompts",
  "device",
] as const;
const INTEGERS = [
  "rank",
  "epochs",
  "steps",
  "batch-size",
  "seed",
  "nproc",
  "threads",
  "max-length",
  "checkpoint-every",
] as const;
const FLOATS = ["alpha", "dropout", "lr", "beta", "clip", "max-seconds"] as const;

/** The options of a command line; throws TrainError "bad_args". */
export function parseTrainArgs(argv: string[]): { help: boolean; verbose: boolean; options: TrainOptions } {
  const spec = Object.fromEntries([...STRINGS, ...INTEGERS, ...FLOATS].map((k) => [k, { type: "string" }]));
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: argv,
      options: {
        ...(spec as Record<string, { type: "string" }>),
        "skip-malformed": { type: "boolean" },
        verbose: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    throw new TrainError("bad_args", (err as Error).message);
  }
  const str = (k: (typeof STRINGS)[number]) => values[k] as string | undefined;
  const int = (k: (typeof INTEGERS)[number]) => number(k, values[k] as string | undefined, true);
  const float = (k: (typeof FLOATS)[number]) => number(k, values[k] as string | undefined, false);
  const help = values.help === true;
  const required = { base: str("base"), data: str("data"), out: str("out"), id: str("id") };
  const missing = Object.entries(required).filter(([, v]) => !v);
  if (!help && missing.length > 0)
    throw new TrainError("bad_args", `Missing ${missing.map(([k]) => `--${k}`).join(", ")}.\n\n${USAGE}`);
  const options: TrainOptions = {
    base: required.base ?? "",
    data: required.data ?? "",
    out: required.out ?? "",
    id: required.id ?? "",
    domain: str("domain"),
    method: oneOf("method", str("method"), ["sft", "dpo", "grpo"] as const),
    from: str("from"),
    parentVersion: str("parent-version"),
    version: str("version"),
    name: str("name"),
    description: str("description"),
    heldout: str("heldout"),
    maxLength: int("max-length"),
    maxLengthPolicy: oneOf("max-length-policy", str("max-length-policy"), ["drop", "truncate"] as const),
    systemPrompts: oneOf("system-prompts", str("system-prompts"), ["mixed", "app"] as const),
    skipMalformed: values["skip-malformed"] === true,
    rank: int("rank"),
    alpha: float("alpha"),
    dropout: float("dropout"),
    lr: float("lr"),
    epochs: int("epochs"),
    steps: int("steps"),
    batchSize: int("batch-size"),
    beta: float("beta"),
    clip: float("clip"),
    seed: int("seed"),
    targets: str("targets")
      ?.split(",")
      .map((t) => t.trim())
      .filter(Boolean),
    nproc: int("nproc"),
    threads: int("threads"),
    device: oneOf("device", str("device"), ["cpu", "cuda", "mps", "auto"] as const),
    maxSeconds: float("max-seconds"),
    checkpointEvery: int("checkpoint-every"),
  };
  return { help, verbose: values.verbose === true, options };
}
