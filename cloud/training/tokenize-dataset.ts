/**
 * Turns a chat dataset (JSONL, see dataset-file.ts) into the tokenized dataset the Python
 * trainer reads: `{"kind":"sft","ids":[…],"start":N}` or `{"kind":"dpo","prompt":[…],
 * "chosen":[…],"rejected":[…]}` a line, formatted by ChatFormatter with the base's own
 * tokenizer; a GRPO group (group-line.ts) becomes `{"kind":"grpo","prompt":[…],"completions":[[…],…],
 * "rewards":[…]}`. An answer that called tools is an SFT line with `"spans"`: the loss ranges, which
 * leave its tool results out. Splits off the held-out examples and applies the length policy, counting both.
 */
import { createHash } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { basename } from "node:path";
import type { LlamaModel } from "node-llama-cpp";
import { loadLlamaBackend } from "../../native/engine/llama-backend";
import type { ToolCallFormat } from "../../common/engine-protocol";
import { ToolRequestError } from "../../native/engine/tool-calls";
import { type DatasetFile, type MalformedLine, type RawExample } from "./dataset-file";
import { ChatFormatter, mixedSystemPrompt, systemPromptFor, type SystemPromptMix } from "./format-examples";
import { TrainError } from "./train-error";

export type TrainMethod = "sft" | "dpo" | "grpo";
export type MaxLengthPolicy = "drop" | "truncate";

/** Share of the examples held out when no held-out file is given. */
export const HELDOUT_SHARE = 0.1;
/** Training prompts copied into the manifest for the router. */
const ROUTING_EXAMPLES = 6;
/** The manifest's limit for one routing example (ManifestFile). */
const ROUTING_EXAMPLE_CHARS = 4000;

export interface TokenizeOptions {
  domain: string;
  method: TrainMethod;
  /** Longest sequence in tokens (prompt + completion); already capped to the base's context. */
  maxLength: number;
  maxLengthPolicy: MaxLengthPolicy;
  /** The training examples' system turns (default "app"); held-out examples keep the app's. */
  systemPrompts?: SystemPromptMix;
  /** Where the tokenized training set goes. */
  trainOut: string;
  /** Where the tokenized held-out set goes (written only when there are held-out examples). */
  heldoutOut: string;
  /** The adapter's own tool-call syntax (its manifest's toolCallFormat), as the engine uses it. */
  toolFormat?: ToolCallFormat;
}

/** The examples whose answers called tools, as tokenized (training and held-out together). */
export interface ToolCallStats {
  /** Training examples with at least one call. */
  examples: number;
  calls: number;
  /** Tokens of the calls' results, laid out but not learned. */
  resultTokens: number;
  /**
   * Results not found in the layout. A line holding one is dropped (`droppedUnmasked`), never
   * trained on: its result's tokens would be learned as if the model had written them.
   */
  unmaskedResults: number;
  /** Lines dropped because a result of theirs was not found in the layout. */
  droppedUnmasked: number;
  /** Examples dropped because a tool's schema cannot be a grammar (the engine refuses it too). */
  badTools: number;
}

export interface DatasetStats {
  sha256: string;
  /** Non-blank lines of the data file. */
  lines: number;
  /** Examples written to the training set. */
  examples: number;
  droppedTooLong: number;
  truncated: number;
  malformed: MalformedLine[];
  /** Completions whose tokens did not extend the prompt's (see ChatFormatter.answer). */
  retokenized: number;
  toolCalls: ToolCallStats;
}

export interface TokenizedDataset {
  trainPath: string;
  /** null when no example is held out. */
  heldoutPath: string | null;
  dataset: DatasetStats;
  heldoutExamples: number;
  /** A handful of the training prompts (last user message). */
  routingExamples: string[];
  /** Tokens in the training set. */
  tokens: number;
  endOfTurn: number;
}

type Line =
  | { kind: "sft"; ids: number[]; start: number; spans?: [number, number][] }
  | {
      kind: "dpo";
      prompt: number[];
      chosen: number[];
      rejected: number[];
      chosenSpans?: [number, number][];
      rejectedSpans?: [number, number][];
    }
  | {
      kind: "grpo";
      prompt: number[];
      completions: number[][];
      rewards: number[];
      /** Completions that called tools: each one's loss spans (relative to it), results left out. */
      completionSpans?: [number, number][][];
      /** A group without a contrast of its own is measured against this reward (group-line.ts). */
      baseline?: number;
    };

/** Whether a prompt belongs to the held-out share: a hash of its messages, stable across datasets. */
export function isHeldOut(prompt: RawExample["prompt"]): boolean {
  const digest = createHash("sha256").update(JSON.stringify(prompt)).digest();
  return digest.readUInt32BE(0) / 2 ** 32 < HELDOUT_SHARE;
}

/** Splits `examples` into training and held-out; at least one of each when there are two. */
export function splitHeldOut(examples: RawExample[]): { train: RawExample[]; heldout: RawExample[] } {
  const heldout = examples.filter((e) => isHeldOut(e.prompt));
  const train = examples.filter((e) => !isHeldOut(e.prompt));
  if (heldout.length === 0 && train.length >= 2) {
    // Too few examples for the hash to pick one: hold out the one with the smallest hash.
    const key = (e: RawExample) => createHash("sha256").update(JSON.stringify(e.prompt)).digest("hex");
    const first = train.reduce((a, e) => (key(e) < key(a) ? e : a));
    return { train: train.filter((e) => e !== first), heldout: [first] };
  }
  if (train.length === 0) return { train: heldout, heldout: [] };
  return { train, heldout };
}

/** Lays examples out and applies the length policy. Exported for its tests. */
export class LineBuilder {
  droppedTooLong = 0;
  truncated = 0;
  retokenized = 0;
  readonly toolCalls: ToolCallStats = {
    examples: 0,
    calls: 0,
    resultTokens: 0,
    unmaskedResults: 0,
    droppedUnmasked: 0,
    badTools: 0,
  };

  constructor(
    private readonly formatter: ChatFormatter,
    private readonly method: TrainMethod,
    private readonly maxLength: number,
    private readonly policy: MaxLengthPolicy,
  ) {}

  /** Adds another builder's counts to this one's (the held-out split's, built on its own). */
  add(other: LineBuilder): void {
    this.droppedTooLong += other.droppedTooLong;
    this.truncated += other.truncated;
    this.retokenized += other.retokenized;
    for (const k of Object.keys(this.toolCalls) as (keyof ToolCallStats)[])
      this.toolCalls[k] += other.toolCalls[k];
  }

  /**
   * Whether a tool line's completions left a result unrendered (not found in the layout, so
   * inside the loss): then it is counted and the line dropped.
   */
  private unmasked(completions: ReadonlyArray<{ unmaskedResults: number }>): boolean {
    const n = completions.reduce((a, c) => a + c.unmaskedResults, 0);
    if (n === 0) return false;
    this.toolCalls.unmaskedResults += n;
    this.toolCalls.droppedUnmasked++;
    return true;
  }

  /** The tokenized line of `example`, or null when it is dropped (its length, an unmasked result). */
  build(example: RawExample, file: string): Line | null {
    if (example.kind === "grpo" || this.method === "grpo") return this.buildGroup(example, file);
    if (example.kind === "sft" && example.tools) return this.buildTools(example, file);
    if (example.kind === "dpo" && example.tools) return this.buildToolPair(example, file);
    const p = this.formatter.prompt(example.prompt);
    const complete = (answer: string) => {
      const c = this.formatter.answer(p.turns, p.ids, answer);
      if (c.retokenized) this.retokenized++;
      return c.ids;
    };
    // The answer of an SFT example; a preference pair trains SFT on its chosen answer.
    if (this.method === "sft") {
      const answer = example.kind === "sft" ? example.answer : example.chosen;
      const completion = this.fit(p.ids.length, [complete(answer)]);
      return completion && { kind: "sft", ids: [...p.ids, ...completion[0]!], start: p.ids.length };
    }
    if (example.kind !== "dpo")
      throw new TrainError(
        "bad_data",
        `${file} line ${example.line}: DPO needs a preference pair ({"prompt", "chosen", "rejected"}).`,
      );
    const pair = this.fit(p.ids.length, [complete(example.chosen), complete(example.rejected)]);
    return pair && { kind: "dpo", prompt: p.ids, chosen: pair[0]!, rejected: pair[1]! };
  }

  /** A GRPO group: the prompt and each sampled answer laid out as an SFT answer, with its reward. */
  private buildGroup(example: RawExample, file: string): Line | null {
    if (example.kind !== "grpo")
      throw new TrainError(
        "bad_data",
        `${file} line ${example.line}: GRPO needs a group of sampled answers ({"prompt", "completions", "rewards"}).`,
      );
    if (this.method !== "grpo")
      throw new TrainError(
        "bad_data",
        `${file} line ${example.line}: a group of sampled answers trains with GRPO only (method grpo).`,
      );
    if (example.completionRounds) return this.buildToolGroup(example);
    const p = this.formatter.prompt(example.prompt);
    const completions = example.completions.map((answer) => {
      const c = this.formatter.answer(p.turns, p.ids, answer);
      if (c.retokenized) this.retokenized++;
      return c.ids;
    });
    const fitted = this.fit(p.ids.length, completions);
    return (
      fitted && {
        kind: "grpo",
        prompt: p.ids,
        completions: fitted,
        rewards: example.rewards,
        ...baselineOf(example),
      }
    );
  }

  /**
   * A group of answers that called tools, each laid out as the engine lays out the Agent's rounds
   * (its results outside the loss spans). Too long is dropped, never cut: a cut completion would
   * end inside a call or a result.
   */
  private buildToolGroup(example: Extract<RawExample, { kind: "grpo" }>): Line | null {
    let group;
    try {
      group = this.formatter.toolGroup(
        example.prompt,
        example.completions.map((answer, i) => ({ rounds: example.completionRounds![i] ?? [], answer })),
        example.tools ?? [],
      );
    } catch (err) {
      if (!(err instanceof ToolRequestError)) throw err;
      this.toolCalls.badTools++;
      return null;
    }
    if (group.prompt.length + Math.max(...group.completions.map((c) => c.ids.length)) > this.maxLength) {
      this.droppedTooLong++;
      return null;
    }
    if (this.unmasked(group.completions)) return null;
    for (const c of group.completions) {
      this.toolCalls.calls += c.calls;
      this.toolCalls.resultTokens += c.resultTokens;
    }
    this.toolCalls.examples++;
    return {
      kind: "grpo",
      prompt: group.prompt,
      completions: group.completions.map((c) => c.ids),
      rewards: example.rewards,
      completionSpans: group.completions.map((c) => c.spans),
      ...baselineOf(example),
    };
  }

  /**
   * An answer with tool calls (or offered tools), laid out as the engine lays out its last round.
   * Too long is always dropped: a cut answer would end inside a call or a result.
   */
  private buildTools(example: Extract<RawExample, { kind: "sft" }>, file: string): Line | null {
    if (this.method !== "sft")
      throw new TrainError(
        "bad_data",
        `${file} line ${example.line}: tool-call examples train with SFT only.`,
      );
    let f;
    try {
      f = this.formatter.toolSft(example.prompt, example.rounds ?? [], example.answer, example.tools ?? []);
    } catch (err) {
      if (!(err instanceof ToolRequestError)) throw err;
      this.toolCalls.badTools++;
      return null;
    }
    if (f.ids.length > this.maxLength) {
      this.droppedTooLong++;
      return null;
    }
    if (this.unmasked([f])) return null;
    if (f.calls > 0) this.toolCalls.examples++;
    this.toolCalls.calls += f.calls;
    this.toolCalls.resultTokens += f.resultTokens;
    return { kind: "sft", ids: f.ids, start: f.start, spans: f.spans };
  }

  /**
   * A pair of answers that called tools. SFT trains on the chosen side, as for any pair; DPO
   * compares the sides' log-probabilities over their spans (not their tool results).
   */
  private buildToolPair(example: Extract<RawExample, { kind: "dpo" }>, file: string): Line | null {
    const chosen = { rounds: example.chosenRounds ?? [], answer: example.chosen };
    const rejected = { rounds: example.rejectedRounds ?? [], answer: example.rejected };
    if (this.method === "sft")
      return this.buildTools(
        { kind: "sft", line: example.line, prompt: example.prompt, ...chosen, tools: example.tools },
        file,
      );
    let pair;
    try {
      pair = this.formatter.toolPair(example.prompt, chosen, rejected, example.tools ?? []);
    } catch (err) {
      if (!(err instanceof ToolRequestError)) throw err;
      this.toolCalls.badTools++;
      return null;
    }
    if (pair.prompt.length + Math.max(pair.chosen.ids.length, pair.rejected.ids.length) > this.maxLength) {
      this.droppedTooLong++;
      return null;
    }
    if (this.unmasked([pair.chosen, pair.rejected])) return null;
    for (const side of [pair.chosen, pair.rejected]) {
      this.toolCalls.calls += side.calls;
      this.toolCalls.resultTokens += side.resultTokens;
    }
    this.toolCalls.examples++;
    return {
      kind: "dpo",
      prompt: pair.prompt,
      chosen: pair.chosen.ids,
      rejected: pair.rejected.ids,
      chosenSpans: pair.chosen.spans,
      rejectedSpans: pair.rejected.spans,
    };
  }

  /** The completions cut to fit after `promptLength` tokens, or null (dropped). */
  private fit(promptLength: number, completions: number[][]): number[][] | null {
    const room = this.maxLength - promptLength;
    if (completions.every((c) => c.length <= room)) return completions;
    if (this.policy === "drop" || room < 1) {
      this.droppedTooLong++;
      return null;
    }
    // Cut answers lose their end-of-turn token: the model must not learn to stop mid-answer.
    this.truncated++;
    return completions.map((c) => c.slice(0, room));
  }
}

/** The group's baseline, when it states one (passed to the trainer as is). */
function baselineOf(example: Extract<RawExample, { kind: "grpo" }>): { baseline?: number } {
  return example.baseline !== undefined ? { baseline: example.baseline } : {};
}

async function writeLines(path: string, lines: Line[]): Promise<void> {
  await writeFile(path, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
}

function tokenCount(line: Line): number {
  if (line.kind === "sft") return line.ids.length;
  if (line.kind === "grpo") return line.prompt.length + line.completions.reduce((n, c) => n + c.length, 0);
  return line.prompt.length + line.chosen.length + line.rejected.length;
}

function routingExamples(examples: RawExample[]): string[] {
  const out = new Set<string>();
  for (const e of examples) {
    const text = e.prompt.findLast((m) => m.role === "user")?.content.trim();
    if (text) out.add(text.slice(0, ROUTING_EXAMPLE_CHARS));
    if (out.size >= ROUTING_EXAMPLES) break;
  }
  return [...out];
}

/**
 * Formats the examples of `data` and of `heldoutFile` (absent: ~HELDOUT_SHARE of `data`, split
 * by prompt hash) with
 * `model` (a vocabulary-only load is enough) and writes the tokenized sets.
 */
export async function formatDataset(
  model: LlamaModel,
  data: DatasetFile,
  heldoutFile: DatasetFile | null,
  options: TokenizeOptions,
): Promise<TokenizedDataset> {
  const { train, heldout } = heldoutFile
    ? { train: data.examples, heldout: heldoutFile.examples }
    : splitHeldOut(data.examples);
  const app = systemPromptFor(options.domain);
  const formatter = new ChatFormatter(model, app, undefined, options.toolFormat);
  const mixed = options.systemPrompts === "mixed";
  const builder = new LineBuilder(
    mixed ? formatter.withSystemPrompt(mixedSystemPrompt(app)) : formatter,
    options.method,
    options.maxLength,
    options.maxLengthPolicy,
  );
  // Held-out examples keep the app's prompt: their loss compares across runs and mixes.
  const heldoutBuilder = mixed
    ? new LineBuilder(formatter, options.method, options.maxLength, options.maxLengthPolicy)
    : builder;
  const build = (b: LineBuilder, examples: RawExample[], file: DatasetFile) =>
    examples.map((e) => b.build(e, basename(file.path))).filter((l): l is Line => l !== null);
  const trainLines = build(builder, train, data);
  const heldoutLines = build(heldoutBuilder, heldout, heldoutFile ?? data);
  if (heldoutBuilder !== builder) builder.add(heldoutBuilder);
  if (trainLines.length === 0) {
    throw new TrainError(
      "empty_data",
      `No training example fits in ${options.maxLength} tokens (${builder.droppedTooLong} too long).`,
    );
  }
  await writeLines(options.trainOut, trainLines);
  if (heldoutLines.length > 0) await writeLines(options.heldoutOut, heldoutLines);
  return {
    trainPath: options.trainOut,
    heldoutPath: heldoutLines.length > 0 ? options.heldoutOut : null,
    dataset: {
      sha256: createHash("sha256").update(data.bytes).digest("hex"),
      lines: data.lines,
      examples: trainLines.length,
      droppedTooLong: builder.droppedTooLong,
      truncated: builder.truncated,
      malformed: data.malformed,
      retokenized: builder.retokenized,
      toolCalls: builder.toolCalls,
    },
    heldoutExamples: heldoutLines.length,
    routingExamples: routingExamples(train),
    tokens: trainLines.reduce((n, l) => n + tokenCount(l), 0),
    endOfTurn: formatter.endOfTurn,
  };
}

/**
 * Loads the base's vocabulary with node-llama-cpp (one thread, no weights, no context) and
 * tokenizes the dataset read by readDatasetFile. Throws TrainError "bad_base" for a base whose
 * tokenizer does not load.
 */
export async function tokenizeDataset(
  basePath: string,
  data: DatasetFile,
  heldout: DatasetFile | null,
  options: TokenizeOptions,
): Promise<TokenizedDataset> {
  const backend = await loadLlamaBackend(1);
  let model: LlamaModel;
  try {
    model = await backend.llama.loadModel({ modelPath: basePath, vocabOnly: true });
  } catch (err) {
    throw new TrainError("bad_base", `Could not load the base model's tokenizer: ${(err as Error).message}`);
  }
  try {
    return await formatDataset(model, data, heldout, options);
  } finally {
    await model.dispose();
  }
}
