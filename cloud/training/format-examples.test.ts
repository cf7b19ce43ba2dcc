/**
 * Training examples are laid out in exactly the tokens the engine evaluates at inference: the
 * prompts are compared with what a real ModelSession puts into its context for the same turns.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { LlamaModel, Token } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SYSTEM_PROMPT, GENUI_INSTRUCTIONS, uiSystemPrompt } from "../../common/prompts";
import { suiteDir } from "../../testing/core/temp-dir";
import { loadLlamaBackend, type LlamaBackend } from "../../native/engine/llama-backend";
import { ModelSession } from "../../native/engine/model-session";
import type { ChatTurn } from "../../common/engine-protocol";
import { EOS_ID } from "../../native/gguf/byte-vocab";
import { readDatasetFile, type ChatMessage } from "./dataset-file";
import { ChatFormatter, mixedSystemPrompt, OTHER_SYSTEM_PROMPTS, systemPromptFor } from "./format-examples";
import {
  preferenceLine,
  sftLine,
  sftLines,
  writeJsonl,
  writeTinyBase,
} from "../../testing/cloud/training/test-data";
import { formatDataset, splitHeldOut, type TokenizeOptions } from "./tokenize-dataset";

const dir = suiteDir("macaron-train-format-");
let backend: LlamaBackend;
let model: LlamaModel;
let session: ModelSession;

beforeAll(async () => {
  const base = await writeTinyBase(dir.path);
  backend = await loadLlamaBackend(1);
  model = await backend.llama.loadModel({ modelPath: base, vocabOnly: true });
  session = await ModelSession.open(backend, base, { contextSize: 2048, sequences: 1 }, () => {});
});
afterAll(async () => {
  await session?.dispose();
  await model?.dispose();
});

/** The tokens the engine's context holds after answering `history` (one token generated). */
async function engineTokens(history: ChatTurn[]): Promise<number[]> {
  await session.slots.clear();
  await session.generate(history, { temperature: 0, maxTokens: 1 }, () => {}, new AbortController().signal);
  return [...session.slots.all[0]!.sequence.contextTokens];
}

function text(ids: readonly number[], specialTokens = false): string {
  return model.detokenize(ids as Token[], specialTokens);
}

function expectPrefixOf(prefix: readonly number[], tokens: readonly number[]): void {
  expect(tokens.slice(0, prefix.length)).toEqual(prefix);
}

const question: ChatMessage = { role: "user", content: "What is 2 plus 2?" };

describe("SFT examples", () => {
  it("have the engine's prompt tokens, then the answer, then EOS; start points at the answer", async () => {
    const formatter = new ChatFormatter(model, systemPromptFor("chat"));
    const { ids, start } = formatter.sft([question], "It is 4.");
    // What core sends for this conversation: the default system prompt, then the question.
    const engine = await engineTokens([
      { role: "system", text: DEFAULT_SYSTEM_PROMPT },
      { role: "user", text: question.content },
    ]);
    expectPrefixOf(ids.slice(0, start), engine);
    expect(engine.length - start).toBeLessThanOrEqual(1); // the one generated token
    expect(text(ids.slice(start, -1))).toBe("It is 4.");
    expect(ids.at(-1)).toBe(model.tokens.eos);
    expect(ids.at(-1)).toBe(EOS_ID); // ChatML's <|im_end|> in the demo vocabulary
  });

  it("continue exactly as the next turn's prompt lays out the answered turn", async () => {
    const formatter = new ChatFormatter(model, systemPromptFor("chat"));
    const earlier: ChatMessage[] = [
      question,
      { role: "assistant", content: "4." },
      { role: "user", content: "And 3?" },
    ];
    const { ids, start } = formatter.sft(earlier, "6.");
    const history: ChatTurn[] = [
      { role: "system", text: DEFAULT_SYSTEM_PROMPT },
      ...earlier.map((m) => ({ role: m.role, text: m.content })),
    ];
    const engine = await engineTokens(history);
    expectPrefixOf(ids.slice(0, start), engine);
    // The whole example (answer + end of turn) is how the following turn's prompt begins.
    const nextTurn = await engineTokens([
      ...history,
      { role: "assistant", text: "6." },
      { role: "user", text: "Thanks" },
    ]);
    expectPrefixOf(ids, nextTurn);
  });

  it("keep the example's own system message instead of the app's", async () => {
    const formatter = new ChatFormatter(model, systemPromptFor("chat"));
    const own: ChatMessage = { role: "system", content: "Answer in French." };
    const { ids, start } = formatter.sft([own, question], "Quatre.");
    const engine = await engineTokens([
      { role: "system", text: own.content },
      { role: "user", text: question.content },
    ]);
    expectPrefixOf(ids.slice(0, start), engine);
    expect(text(ids.slice(0, start))).not.toContain(DEFAULT_SYSTEM_PROMPT);
  });

  it("get the UI-mode system prompt in the UI domain", async () => {
    const formatter = new ChatFormatter(model, systemPromptFor("ui"));
    const { ids, start } = formatter.sft([question], '{"version":1,"blocks":[]}');
    const engine = await engineTokens([
      { role: "system", text: uiSystemPrompt(DEFAULT_SYSTEM_PROMPT) },
      { role: "user", text: question.content },
    ]);
    expectPrefixOf(ids.slice(0, start), engine);
    expect(text(ids.slice(0, start), true)).toContain(GENUI_INSTRUCTIONS);
  });
});

function options(over: Partial<TokenizeOptions> = {}): TokenizeOptions {
  return {
    domain: "chat",
    method: "sft",
    maxLength: 4096,
    maxLengthPolicy: "drop",
    trainOut: join(dir.path, "train.jsonl"),
    heldoutOut: join(dir.path, "heldout.jsonl"),
    ...over,
  };
}

async function readLines(path: string): Promise<Array<Record<string, number[] | number | string>>> {
  return (await readFile(path, "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, number[] | number | string>);
}

describe("the tokenized dataset", () => {
  const long = JSON.stringify({
    messages: [question, { role: "assistant", content: "x".repeat(300) }],
  });

  it("drops or truncates too-long examples and counts them", async () => {
    const data = await readDatasetFile(await writeJsonl(dir.path, "long.jsonl", [sftLine(1), long]));
    const heldout = await readDatasetFile(await writeJsonl(dir.path, "h.jsonl", [sftLine(2)]));
    const dropped = await formatDataset(model, data, heldout, options({ maxLength: 200 }));
    expect(dropped.dataset).toMatchObject({ lines: 2, examples: 1, droppedTooLong: 1, truncated: 0 });
    // ChatML: every answer's tokens in context extend the prompt's (no fallback needed).
    expect(dropped.dataset.retokenized).toBe(0);

    const cut = await formatDataset(
      model,
      data,
      heldout,
      options({ maxLength: 200, maxLengthPolicy: "truncate" }),
    );
    expect(cut.dataset).toMatchObject({ examples: 2, droppedTooLong: 0, truncated: 1 });
    const lines = await readLines(cut.trainPath);
    const ids = lines[1]!.ids as number[];
    expect(ids).toHaveLength(200);
    // A cut answer does not end its turn.
    expect(ids.at(-1)).not.toBe(EOS_ID);
    expect((lines[0]!.ids as number[]).at(-1)).toBe(EOS_ID);
  });

  it("writes DPO pairs: the prompt's tokens, then each answer with its end of turn", async () => {
    const data = await readDatasetFile(await writeJsonl(dir.path, "pairs.jsonl", [preferenceLine(3)]));
    const heldout = await readDatasetFile(await writeJsonl(dir.path, "hp.jsonl", [preferenceLine(4)]));
    const out = await formatDataset(model, data, heldout, options({ method: "dpo" }));
    const [line] = await readLines(out.trainPath);
    const formatter = new ChatFormatter(model, systemPromptFor("chat"));
    const sft = formatter.sft([{ role: "user", content: "What is 3 plus 3?" }], "It is 6.");
    expect(line!.kind).toBe("dpo");
    expect(line!.prompt).toEqual(sft.ids.slice(0, sft.start));
    expect(line!.chosen).toEqual(sft.ids.slice(sft.start));
    expect(text(line!.rejected as number[], true)).toBe("It is 7.<|im_end|>");
  });

  it("refuses DPO on a line without a preference pair, naming it", async () => {
    const data = await readDatasetFile(
      await writeJsonl(dir.path, "mixed.jsonl", [preferenceLine(1), sftLine(2)]),
    );
    await expect(formatDataset(model, data, data, options({ method: "dpo" }))).rejects.toThrow(
      /mixed\.jsonl line 2: DPO needs a preference pair/,
    );
  });

  it("mixes system turns in training (app's, none, other clients'), keeps the app's in held-out and an example's own", async () => {
    const data = await readDatasetFile(
      await writeJsonl(dir.path, "mix.jsonl", [...sftLines(200), sftLine(500, "Answer in French.")]),
    );
    const heldout = await readDatasetFile(
      await writeJsonl(dir.path, "mix-h.jsonl", sftLines(220).slice(200)),
    );
    const app = new ChatFormatter(model, systemPromptFor("chat"));
    const variants = {
      app: app,
      none: app.withSystemPrompt(""),
      ...Object.fromEntries(OTHER_SYSTEM_PROMPTS.map((p, i) => [`other${i}`, app.withSystemPrompt(p)])),
    };
    const layoutOf = (
      line: Record<string, number[] | number | string>,
      prompt: ChatMessage[],
      answer: string,
    ) =>
      Object.entries(variants)
        .filter(([, f]) => JSON.stringify(f.sft(prompt, answer).ids) === JSON.stringify(line.ids))
        .map(([k]) => k);
    const examples = [...sftLines(200), sftLine(500, "Answer in French.")].map(
      (l) => (JSON.parse(l) as { messages: ChatMessage[] }).messages,
    );
    const count = async (mix: "mixed" | "app") => {
      const out = await formatDataset(model, data, heldout, options({ systemPrompts: mix }));
      const lines = await readLines(out.trainPath);
      expect(lines).toHaveLength(201);
      const counts: Record<string, number> = { app: 0, none: 0, other: 0 };
      for (const [i, line] of lines.slice(0, 200).entries()) {
        const m = examples[i]!;
        const found = layoutOf(line, m.slice(0, -1), m.at(-1)!.content);
        expect(found, `line ${i}`).toHaveLength(1);
        counts[found[0]!.startsWith("other") ? "other" : found[0]!]!++;
      }
      // The example with its own system message keeps it.
      const own = examples[200]!;
      expect(lines[200]!.ids).toEqual(app.sft(own.slice(0, -1), own.at(-1)!.content).ids);
      expect(app.sft(own.slice(0, -1), own.at(-1)!.content).ids).not.toEqual(
        app.sft(own.slice(1, -1), own.at(-1)!.content).ids,
      );
      // Held-out examples are laid out under the app's prompt only.
      const held = await readLines(out.heldoutPath!);
      const heldExamples = sftLines(220)
        .slice(200)
        .map((l) => (JSON.parse(l) as { messages: ChatMessage[] }).messages);
      held.forEach((line, i) =>
        expect(layoutOf(line, heldExamples[i]!.slice(0, -1), heldExamples[i]!.at(-1)!.content)).toEqual([
          "app",
        ]),
      );
      return counts;
    };
    const mixed = await count("mixed");
    expect(mixed.app).toBeGreaterThanOrEqual(80);
    expect(mixed.app).toBeLessThanOrEqual(120);
    expect(mixed.none).toBeGreaterThanOrEqual(30);
    expect(mixed.other).toBeGreaterThanOrEqual(30);
    expect(await count("app")).toEqual({ app: 200, none: 0, other: 0 });
    // The choice is a function of the prompt: the same prompt, the same system turn.
    const choose = mixedSystemPrompt("APP");
    expect(choose([question])).toBe(choose([{ ...question }]));
  });

  it("holds out ~10% by prompt hash, the same way every time, never also in training", () => {
    const examples = sftLines(200).map((l) => JSON.parse(l) as { messages: ChatMessage[] });
    const raw = examples.map((e, i) => ({
      kind: "sft" as const,
      line: i + 1,
      prompt: e.messages.slice(0, -1),
      answer: e.messages.at(-1)!.content,
    }));
    const a = splitHeldOut(raw);
    const b = splitHeldOut([...raw].reverse());
    expect(a.heldout.length).toBeGreaterThanOrEqual(10);
    expect(a.heldout.length).toBeLessThanOrEqual(35);
    expect(new Set(b.heldout.map((e) => e.line))).toEqual(new Set(a.heldout.map((e) => e.line)));
    const trained = new Set(a.train.map((e) => JSON.stringify(e.prompt)));
    expect(a.heldout.some((e) => trained.has(JSON.stringify(e.prompt)))).toBe(false);
    // Two examples: one of each.
    expect(splitHeldOut(raw.slice(0, 2)).heldout).toHaveLength(1);
  });
});

describe("the data file", () => {
  it("reports a malformed line with its number", async () => {
    const bad = await writeJsonl(dir.path, "bad.jsonl", [sftLine(1), sftLine(2), "{not json", sftLine(4)]);
    await expect(readDatasetFile(bad)).rejects.toThrow(/bad\.jsonl line 3: not valid JSON/);
    const noAnswer = JSON.stringify({ messages: [question] });
    const unanswered = await writeJsonl(dir.path, "unanswered.jsonl", [sftLine(1), "", noAnswer]);
    await expect(readDatasetFile(unanswered)).rejects.toThrow(
      /line 3: the last message must be the assistant's/,
    );
    const skipped = await readDatasetFile(bad, true);
    expect(skipped).toMatchObject({ lines: 4, malformed: [{ line: 3 }] });
    expect(skipped.examples).toHaveLength(3);
  });

  it("refuses an empty or missing file", async () => {
    const empty = await writeJsonl(dir.path, "empty.jsonl", ["", "  "]);
    await expect(readDatasetFile(empty)).rejects.toMatchObject({ code: "empty_data" });
    await expect(readDatasetFile(join(dir.path, "nope.jsonl"))).rejects.toThrow(/Data file not found/);
  });
});
