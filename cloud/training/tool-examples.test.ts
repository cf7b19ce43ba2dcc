/**
 * Tool-call examples (the Agent's trajectories as the cloud export writes them) are laid out in
 * the tokens the engine evaluates when the Agent continues after its tool results: compared with
 * a real ModelSession on the demo base under the demo Agent's own call syntax. The loss spans
 * cover the call and the answer, never the result; the Python trainer's batches agree.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { LlamaModel, Token } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { suiteDir } from "../../testing/core/temp-dir";
import { loadLlamaBackend, type LlamaBackend } from "../../native/engine/llama-backend";
import { ModelSession } from "../../native/engine/model-session";
import type { ChatTurn, ToolCallFormat, ToolDefinition } from "../../common/engine-protocol";
import { demoAdaptersDir, demoBasePath } from "../../native/gguf/demo-files";
import { toFunctions } from "../../native/engine/tool-calls";
import { renderToolDocs } from "../../native/engine/tool-docs";
import { parseExampleLine, readDatasetFile, type ToolRound } from "./dataset-file";
import { ChatFormatter, promptTurns, systemPromptFor } from "./format-examples";
import { writeJsonl } from "../../testing/cloud/training/test-data";
import { formatDataset } from "./tokenize-dataset";
import { trainAdapter } from "./train";

const agentFormat = (
  JSON.parse(readFileSync(join(demoAdaptersDir(), "agent.json"), "utf8")) as {
    toolCallFormat: ToolCallFormat;
  }
).toolCallFormat;

const timer: ToolDefinition = {
  name: "set_timer",
  description: "Start a countdown timer.",
  parameters: { type: "object", properties: { minutes: { type: "number" } }, required: ["minutes"] },
};
const RESULT = '{"ok":true,"endsAt":"10:15"}';

/** The export's line for "set a timer" answered by one call and a sentence. */
const timerLine = (minutes: number) =>
  JSON.stringify({
    messages: [
      { role: "user", content: `Call a tool and set a timer for ${minutes} minutes.` },
      {
        role: "assistant",
        content: "",
        tool_calls: [
          {
            id: "call_0",
            type: "function",
            function: { name: "set_timer", arguments: JSON.stringify({ minutes }) },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_0", content: RESULT },
      { role: "assistant", content: `Your ${minutes} minute timer is on.` },
    ],
    tools: [{ type: "function", function: timer }],
  });

const dir = suiteDir("macaron-tool-examples-");
let backend: LlamaBackend;
let model: LlamaModel;
let session: ModelSession;

beforeAll(async () => {
  backend = await loadLlamaBackend(1);
  model = await backend.llama.loadModel({ modelPath: demoBasePath(), vocabOnly: true });
  session = await ModelSession.open(backend, demoBasePath(), { contextSize: 2048, sequences: 1 }, () => {});
});
afterAll(async () => {
  await session?.dispose();
  await model?.dispose();
});

/** What the engine's context holds after one token of a tool turn on `history`. */
async function engineTokens(history: ChatTurn[], toolFormat = agentFormat): Promise<number[]> {
  await session.slots.clear();
  await session.generate(
    history,
    { temperature: 0, maxTokens: 1, tools: [timer], toolChoice: "auto", toolFormat },
    () => {},
    new AbortController().signal,
  );
  return [...session.slots.all[0]!.sequence.contextTokens];
}

const text = (ids: readonly number[]) => model.detokenize(ids as Token[], false);

describe("tool-call examples", () => {
  const example = parseExampleLine(timerLine(15), 1);

  it("are read from the export's OpenAI layout into rounds of calls with their results", () => {
    expect(example).toEqual({
      kind: "sft",
      line: 1,
      prompt: [{ role: "user", content: "Call a tool and set a timer for 15 minutes." }],
      answer: "Your 15 minute timer is on.",
      rounds: [{ text: "", calls: [{ name: "set_timer", arguments: { minutes: 15 }, result: RESULT }] }],
      tools: [timer],
    });
    const broken = JSON.parse(timerLine(1)) as { messages: Record<string, unknown>[] };
    broken.messages[2]!.tool_call_id = "call_9";
    expect(parseExampleLine(JSON.stringify(broken), 2)).toBe(
      'tool_calls[0] ("call_0") must be answered by the next "tool" message',
    );
    broken.messages.splice(2, 1);
    expect(parseExampleLine(JSON.stringify(broken), 3)).toMatch(
      /must be answered by the next "tool" message/,
    );
  });

  it("refuse malformed calls with the line's reason", () => {
    const line = (mutate: (l: { messages: Record<string, unknown>[]; tools: unknown[] }) => void) => {
      const l = JSON.parse(timerLine(1)) as { messages: Record<string, unknown>[]; tools: unknown[] };
      mutate(l);
      return parseExampleLine(JSON.stringify(l), 7);
    };
    const calls = (l: { messages: Record<string, unknown>[] }) =>
      l.messages[1]!.tool_calls as { function: Record<string, unknown> }[];
    expect(line((l) => (calls(l)[0]!.function.arguments = "{minutes: 1"))).toBe(
      "tool_calls[0].function.arguments is not valid JSON",
    );
    expect(line((l) => (l.tools = [{ type: "function", function: { name: "set timer" } }]))).toMatch(
      /^tools\[0\]\.function\.name must match/,
    );
    expect(line((l) => l.messages.pop())).toBe("the last message must be the assistant's answer");
    expect(line((l) => l.messages.splice(1, 0, { role: "tool", tool_call_id: "x", content: "?" }))).toMatch(
      /only assistant messages with "tool_calls"/,
    );
    // After its calls the answer may be empty: the Agent ends its turn with the result.
    expect(line((l) => (l.messages[3]!.content = ""))).toMatchObject({ kind: "sft", answer: "" });
  });

  it("are the engine's tokens of the Agent continuing after its call; the loss skips the result", async () => {
    if (typeof example === "string" || example.kind !== "sft") throw new Error(JSON.stringify(example));
    const formatter = new ChatFormatter(model, systemPromptFor("agent"), undefined, agentFormat);
    const f = formatter.toolSft(example.prompt, example.rounds!, example.answer, example.tools!);
    const turns = promptTurns(example.prompt, systemPromptFor("agent"));
    // The engine before the call: the prompt as the Agent's first round sees it.
    const first = await engineTokens(turns);
    expect(first.length - f.start).toBeLessThanOrEqual(1);
    expect(f.ids.slice(0, f.start)).toEqual(first.slice(0, f.start));
    // The engine after the call: the agent loop's next round continues the answered call.
    const round: ToolRound = example.rounds![0]!;
    const after = await engineTokens([...turns, { role: "assistant", text: round.text, calls: round.calls }]);
    const evaluated = after.slice(0, -1);
    expect(f.ids.slice(0, evaluated.length)).toEqual(evaluated);

    // Learned: the call in the Agent's syntax, then the answer and the end of turn.
    expect(f.spans).toHaveLength(2);
    const [call, answer] = f.spans;
    expect(call![0]).toBe(f.start);
    // Compact JSON arguments, as the Agent writes them (the engine lays its past calls out so).
    expect(text(f.ids.slice(...call!))).toBe('{"tool":"set_timer","arguments":{"minutes":15}}');
    expect(text(f.ids.slice(answer![0], answer![1] - 1))).toBe("Your 15 minute timer is on.");
    expect(answer![1]).toBe(f.ids.length);
    // Given, not learned: the result as the wrapper renders it (prefix, JSON of the text, suffix).
    const between = text(f.ids.slice(call![1], answer![0]));
    expect(between).toBe(`\n${JSON.stringify(RESULT)}\n`);
    expect(f).toMatchObject({ calls: 1, resultTokens: answer![0] - call![1], unmaskedResults: 0 });
  });

  it("document the tools as the engine does under a compact format: the same lines, the same tokens", async () => {
    if (typeof example === "string" || example.kind !== "sft") throw new Error(JSON.stringify(example));
    const compact: ToolCallFormat = { ...agentFormat, documented: "compact" };
    const formatter = new ChatFormatter(model, systemPromptFor("agent"), undefined, compact);
    const f = formatter.toolSft(example.prompt, example.rounds!, example.answer, example.tools!);
    const first = await engineTokens(promptTurns(example.prompt, systemPromptFor("agent")), compact);
    expect(first.length - f.start).toBeLessThanOrEqual(1);
    expect(f.ids.slice(0, f.start)).toEqual(first.slice(0, f.start));
    // One module renders it for both (native/engine/tool-docs.ts).
    const docs = renderToolDocs(toFunctions([timer]));
    expect(docs).toBe("Tools:\nset_timer(minutes: number) Start a countdown timer.");
    expect(model.detokenize(f.ids.slice(0, f.start) as Token[], true)).toContain(
      `${systemPromptFor("agent")}\n\n${docs}<|im_end|>`,
    );
  });

  it("are tokenized with spans and counted, and the trainer's batches learn only those tokens", async () => {
    const path = await writeJsonl(dir.path, "agent.jsonl", [timerLine(5), timerLine(20), timerLine(45)]);
    const data = await readDatasetFile(path);
    const out = await formatDataset(model, data, null, {
      domain: "agent",
      method: "sft",
      maxLength: 2048,
      maxLengthPolicy: "drop",
      trainOut: join(dir.path, "train.tok.jsonl"),
      heldoutOut: join(dir.path, "heldout.tok.jsonl"),
      toolFormat: agentFormat,
    });
    // Counted over the training and the held-out examples, each of which makes one call.
    const all = out.dataset.examples + out.heldoutExamples;
    expect(out.dataset.toolCalls).toMatchObject({
      examples: all,
      calls: all,
      unmaskedResults: 0,
      badTools: 0,
    });
    expect(out.dataset.toolCalls.resultTokens).toBeGreaterThan(0);
    const lines = readFileSync(out.trainPath, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { ids: number[]; start: number; spans: [number, number][] });
    for (const line of lines) {
      const learned = line.spans.map(([a, b]) => text(line.ids.slice(a, b))).join("|");
      expect(learned).toMatch(
        /^\{"tool":"set_timer","arguments":\{"minutes":\d+\}\}\|Your \d+ minute timer is on\./,
      );
      expect(learned).not.toContain("endsAt");
    }
    // A tool whose schema the engine cannot turn into a grammar: dropped and counted, like the engine refuses it.
    const bogus = JSON.parse(timerLine(9)) as { tools: { function: { parameters: unknown } }[] };
    bogus.tools[0]!.function.parameters = { type: "array" };
    const withBogus = await writeJsonl(dir.path, "bogus.jsonl", [
      timerLine(5),
      timerLine(20),
      JSON.stringify(bogus),
    ]);
    const counted = await formatDataset(model, await readDatasetFile(withBogus), null, {
      domain: "agent",
      method: "sft",
      maxLength: 2048,
      maxLengthPolicy: "drop",
      trainOut: join(dir.path, "bogus.tok.jsonl"),
      heldoutOut: join(dir.path, "bogus-heldout.tok.jsonl"),
      toolFormat: agentFormat,
    });
    expect(counted.dataset.toolCalls).toMatchObject({ examples: 2, badTools: 1 });

    // The trainer's own batching: targets exactly at the span tokens (ignore elsewhere).
    const script = [
      "import json, sys",
      "sys.path.insert(0, 'cloud/trainer')",
      "from macaron_trainer.data import load_dataset, seq_batch, IGNORE",
      "d = load_dataset(sys.argv[1], ('sft', 'lm'), 1 << 20, 4096)",
      "_, t = seq_batch(d.examples, 'cpu')",
      "print(json.dumps([[i + 1 for i, v in enumerate(row.tolist()) if v != IGNORE] for row in t]))",
    ].join("\n");
    const positions = JSON.parse(
      execFileSync("/usr/bin/python3", ["-c", script, out.trainPath], { encoding: "utf8" }),
    ) as number[][];
    positions.forEach((learned, i) => {
      const expected = lines[i]!.spans.flatMap(([a, b]) => Array.from({ length: b - a }, (_, k) => a + k));
      expect(learned).toEqual(expected);
    });
  });

  it("pairs: an allowed call chosen over a denied one, each side learned on its call and answer (DPO)", async () => {
    const good = JSON.parse(timerLine(15)) as { messages: unknown[]; tools: unknown[] };
    const pairLine = (minutes: number) =>
      JSON.stringify({
        prompt: [{ role: "user", content: `Call a tool and set a timer for ${minutes} minutes.` }],
        chosen: (JSON.parse(timerLine(minutes)) as { messages: unknown[] }).messages.slice(1),
        rejected: [
          {
            role: "assistant",
            content: "",
            tool_calls: [
              {
                id: "call_0",
                type: "function",
                function: { name: "set_timer", arguments: '{"minutes":999}' },
              },
            ],
          },
          { role: "tool", tool_call_id: "call_0", content: "The user denied this call." },
          { role: "assistant", content: "" },
        ],
        tools: good.tools,
      });
    const path = await writeJsonl(dir.path, "pairs.jsonl", [pairLine(15), pairLine(25), pairLine(35)]);
    const data = await readDatasetFile(path);
    expect(data.examples[0]).toMatchObject({
      kind: "dpo",
      chosen: "Your 15 minute timer is on.",
      rejected: "",
    });
    const out = await formatDataset(model, data, null, {
      domain: "agent",
      method: "dpo",
      maxLength: 2048,
      maxLengthPolicy: "drop",
      trainOut: join(dir.path, "pairs.tok.jsonl"),
      heldoutOut: join(dir.path, "pairs-heldout.tok.jsonl"),
      toolFormat: agentFormat,
    });
    expect(out.dataset.toolCalls).toMatchObject({ examples: 3, calls: 6, unmaskedResults: 0 });
    const lines = readFileSync(out.trainPath, "utf8")
      .trim()
      .split("\n")
      .map(
        (l) =>
          JSON.parse(l) as {
            prompt: number[];
            chosen: number[];
            rejected: number[];
            chosenSpans: [number, number][];
            rejectedSpans: [number, number][];
          },
      );
    const learned = (ids: number[], spans: [number, number][]) =>
      spans.map(([a, b]) => text(ids.slice(a, b))).join("|");
    for (const l of lines) {
      expect(learned(l.chosen, l.chosenSpans)).toMatch(
        /^\{"tool":"set_timer","arguments":\{"minutes":\d+\}\}\|Your/,
      );
      expect(learned(l.rejected, l.rejectedSpans)).toBe('{"tool":"set_timer","arguments":{"minutes":999}}|');
    }
    // The trainer's pairs: each side's targets exactly at its spans (after the prompt).
    const script = [
      "import json, sys",
      "sys.path.insert(0, 'cloud/trainer')",
      "from macaron_trainer.data import load_dataset, pair_sequences, seq_batch, IGNORE",
      "d = load_dataset(sys.argv[1], ('dpo',), 1 << 20, 4096)",
      "_, t = seq_batch(pair_sequences(d.examples), 'cpu')",
      "print(json.dumps([[i + 1 for i, v in enumerate(row.tolist()) if v != IGNORE] for row in t]))",
    ].join("\n");
    const positions = JSON.parse(
      execFileSync("/usr/bin/python3", ["-c", script, out.trainPath], { encoding: "utf8" }),
    ) as number[][];
    const expected = (offset: number, spans: [number, number][]) =>
      spans.flatMap(([a, b]) => Array.from({ length: b - a }, (_, k) => offset + a + k));
    expect(positions).toEqual([
      ...lines.map((l) => expected(l.prompt.length, l.chosenSpans)),
      ...lines.map((l) => expected(l.prompt.length, l.rejectedSpans)),
    ]);
    // And the real trainer runs DPO on them from the shipped Agent.
    const trained = await trainAdapter(
      {
        base: demoBasePath(),
        data: path,
        out: join(dir.path, "dpo"),
        id: "agent",
        method: "dpo",
        from: join(demoAdaptersDir(), "agent.gguf"),
        steps: 2,
        threads: 1,
        device: "cpu",
        seed: 0,
      },
      () => undefined,
    );
    expect(trained.manifest.lineage).toMatchObject({ method: "dpo", dataset: { toolCalls: { calls: 6 } } });
  });
});
