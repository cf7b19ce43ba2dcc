/**
 * Users' trajectory groups (cloud/prepare/groups.ts) through the trainer's own tokenizer on the
 * demo base, in the demo Agent's call syntax: a lone failure keeps its baseline and learns its
 * call and answer, never the tool result (what the agent loop told the model); a failure with no
 * text of its own (a stopped call, an empty result after it) learns its call alone. A result the
 * layout cannot mask drops the group (unmasked-results.test.ts), never trained on.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LlamaModel, Token } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TrajectoryStepWire } from "../../common/feedback-protocol";
import { loadLlamaBackend } from "../../native/engine/llama-backend";
import { demoAdaptersDir, demoBasePath } from "../../native/gguf/demo-files";
import type { StoredItem } from "../store";
import { timerStep, toolItem } from "../../testing/cloud/prepare";
import { suiteDir } from "../../testing/core/temp-dir";
import { prepareExport } from "../prepare/prepare";
import { readDatasetFile } from "./dataset-file";
import { formatDataset } from "./tokenize-dataset";

const dir = suiteDir("macaron-user-groups-tok-");
const agent = JSON.parse(readFileSync(join(demoAdaptersDir(), "agent.json"), "utf8")) as {
  toolCallFormat: unknown;
};
/** The demo's set_timer answers in words. */
const step = (over: Partial<TrajectoryStepWire> = {}) =>
  timerStep({ result: "Timer set for 15 minutes.", ...over });

let model: LlamaModel;
beforeAll(async () => {
  const backend = await loadLlamaBackend(1);
  model = await backend.llama.loadModel({ modelPath: demoBasePath(), vocabOnly: true });
});
afterAll(async () => {
  await model?.dispose();
});

interface Tokenized {
  prompt: Token[];
  completions: Token[][];
  rewards: number[];
  completionSpans: [number, number][][];
  baseline?: number;
}

/** The groups export of `rows`, tokenized for GRPO; the lines and the tool-call counts. */
async function tokenize(name: string, rows: StoredItem[]) {
  const exported = prepareExport(
    { domain: "agent", items: rows },
    { type: "groups", scan: () => ({ findings: [] }), heldoutShare: 0, bytesPerToken: 1 },
  );
  const data = join(dir.path, `${name}.jsonl`);
  writeFileSync(data, exported.lines.train.map((l) => `${l}\n`).join(""));
  const heldout = join(dir.path, `${name}.heldout.jsonl`);
  // Its own held-out file (the same lines): every line trains, none is split off.
  writeFileSync(heldout, exported.lines.train.map((l) => `${l}\n`).join(""));
  const tokenized = await formatDataset(model, await readDatasetFile(data), await readDatasetFile(heldout), {
    domain: "agent",
    method: "grpo",
    maxLength: 2048,
    maxLengthPolicy: "drop",
    trainOut: join(dir.path, `${name}.tok.jsonl`),
    heldoutOut: join(dir.path, `${name}.heldout.tok.jsonl`),
    toolFormat: agent.toolCallFormat as never,
  });
  const lines = readFileSync(tokenized.trainPath, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Tokenized);
  return { exported, tokenized, lines };
}

/** The text of each completion's learned spans, and of the rest (what is only context). */
function learned(line: Tokenized, i: number): { learned: string; context: string } {
  const ids = line.completions[i]!;
  const spans = line.completionSpans[i]!;
  const inSpan = (t: number) => spans.some(([a, b]) => t >= a && t < b);
  return {
    learned: model.detokenize(ids.filter((_, t) => inSpan(t))),
    context: model.detokenize(ids.filter((_, t) => !inSpan(t))),
  };
}

describe("users' trajectory groups through the trainer's tokenizer", () => {
  it("a lone failure keeps its baseline and learns its call and answer, never the result", async () => {
    const { tokenized, lines } = await tokenize("lone", [
      toolItem("Set a timer for 50 minutes.", "Timer is set.", [
        step({ arguments: { minutes: 50 }, decision: "deny", state: "denied", result: null }),
      ]),
      // A failure with nothing of its own after the call: no text, the result the only rest.
      toolItem("Please time my tea.", "", [step({ state: "stopped", result: null })]),
    ]);
    // Training and held-out sets together (the same two lines each).
    expect(tokenized.dataset.toolCalls).toMatchObject({
      examples: 4,
      calls: 4,
      unmaskedResults: 0,
      badTools: 0,
    });
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line).toMatchObject({ rewards: [0], baseline: 0.5 });
      expect(line.completions).toHaveLength(1);
    }
    // The call in the Agent's syntax and the answer are learned (made less likely); what the
    // agent loop told the model is context only.
    const denied = learned(lines[0]!, 0);
    expect(denied.learned).toBe('{"tool":"set_timer","arguments":{"minutes":50}}Timer is set.');
    expect(denied.context.trim()).toBe('"The user denied this call."');
    // The stopped call with no text: its call alone is learned, its empty result never.
    const stopped = learned(lines[1]!, 0);
    expect(stopped.learned).toBe('{"tool":"set_timer","arguments":{"minutes":15}}');
    expect(stopped.context.trim()).toBe('""');
  }, 120_000);
});
