/**
 * The Agent's generated tool sets: training and held-out pools share no tool name, parameter,
 * value or distinctive description word, nor any wording; no held-out request occurs in the
 * training data; server-everything's tools (the bench's third set) are in neither pool; every
 * line is a valid dataset line whose call holds the values its request states, and offers 2–6
 * generated tools among which is the one called (half the training sets behind the app's
 * built-in tools, never the one called).
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { checkArguments } from "../../../electron/core/tools/argument-check";
import { parseExampleLine } from "../../../cloud/training/dataset-file";
import { EVERYTHING_REQUESTS } from "../../../testing/mcp/everything-requests";
import { SEED_DATA_VERSION, SEED_FAMILIES, seedFiles } from "../seed-data";
import {
  builtinDefinitions,
  HELDOUT_TOOLS,
  TOOL_SET_COUNTS,
  TOOL_SET_HELDOUT_WORDINGS,
  TOOL_SET_TRAIN_WORDINGS,
  toolSetHeldout,
  toolSetTrainLines,
  TRAIN_TOOLS,
  type ToolSetLine,
  type ToolSpec,
} from "./tool-sets";
import { AGENT_PLANS } from "./agent";

const seed = `${SEED_DATA_VERSION}/agent-tools`;
const train = toolSetTrainLines(seed, AGENT_PLANS.train.subjects);
const heldout = toolSetHeldout(seed);

/** Words of a description that say what the tool is about (longer than 3 letters, not common). */
const COMMON = new Set([
  "with",
  "from",
  "that",
  "into",
  "this",
  "their",
  "some",
  "returns",
  "user's",
  "current",
]);
const words = (text: string) =>
  text
    .toLowerCase()
    .split(/[^a-z']+/)
    .filter((w) => w.length > 3 && !COMMON.has(w));

const params = (pool: readonly ToolSpec[]) => pool.flatMap((t) => t.params.map((p) => p.name));
/** String values (numbers and booleans are anybody's). */
const values = (pool: readonly ToolSpec[]) =>
  pool.flatMap((t) => t.params.flatMap((p) => p.values.filter((v): v is string => typeof v === "string")));

describe("the generated tool sets", () => {
  it("keep training and held-out tools apart: names, parameters, values and description words", () => {
    const trainNames = new Set(TRAIN_TOOLS.map((t) => t.name));
    for (const t of HELDOUT_TOOLS) expect(trainNames.has(t.name), t.name).toBe(false);
    const trainParams = new Set(params(TRAIN_TOOLS));
    for (const p of params(HELDOUT_TOOLS)) expect(trainParams.has(p), p).toBe(false);
    const trainValues = new Set(values(TRAIN_TOOLS).map((v) => v.toLowerCase()));
    for (const v of values(HELDOUT_TOOLS)) expect(trainValues.has(v.toLowerCase()), v).toBe(false);
    const trainWords = new Set(TRAIN_TOOLS.flatMap((t) => words(t.description)));
    for (const t of HELDOUT_TOOLS)
      expect(
        words(t.description).filter((w) => trainWords.has(w)),
        t.name,
      ).toEqual([]);
    for (const w of TOOL_SET_HELDOUT_WORDINGS) expect(TOOL_SET_TRAIN_WORDINGS).not.toContain(w);
  });

  it("never train on a held-out tool, request or wording, nor on server-everything's tools", () => {
    const text = JSON.stringify(train);
    for (const t of HELDOUT_TOOLS) expect(text).not.toContain(`"${t.name}"`);
    for (const r of heldout) expect(text).not.toContain(r.request);
    for (const w of TOOL_SET_HELDOUT_WORDINGS) {
      const literal = w.split(/\{\w+\}/).sort((a, b) => b.length - a.length)[0]!;
      expect(text.toLowerCase()).not.toContain(literal.toLowerCase());
    }
    const everything = new Set(EVERYTHING_REQUESTS.map((r) => r.tool));
    for (const name of [...TRAIN_TOOLS, ...HELDOUT_TOOLS].map((t) => t.name))
      expect(everything.has(name), name).toBe(false);
    for (const r of EVERYTHING_REQUESTS) expect(text).not.toContain(r.request);
    // Nor on the Agent's own held-out subjects and wordings (the default contract's agent cases).
    for (const family of SEED_FAMILIES.agent) {
      for (const key of family.keys("heldout"))
        expect(text.toLowerCase(), key).not.toContain(key.toLowerCase());
      for (const w of family.wordings("heldout")) {
        const literal = w.split(/\{\w+\}/).sort((a, b) => b.length - a.length)[0]!;
        expect(text.toLowerCase(), w).not.toContain(literal.toLowerCase());
      }
    }
  });

  it("offer 2–6 tools holding the one called, whose arguments pass its schema and appear in the request", () => {
    const calls = train.filter((l) => l.messages.length === 4);
    expect(calls).toHaveLength(TOOL_SET_COUNTS.train);
    expect(train).toHaveLength(TOOL_SET_COUNTS.train + TOOL_SET_COUNTS.plans);
    for (const r of heldout) {
      expect(r.tools.length).toBeGreaterThanOrEqual(2);
      expect(r.tools.length).toBeLessThanOrEqual(6);
      const tool = r.tools.find((t) => t.name === r.call.name)!;
      expect(checkArguments(tool.parameters!, r.call.arguments)).toEqual({ ok: true });
      for (const v of Object.values(r.call.arguments))
        if (typeof v !== "boolean") expect(r.request, r.request).toContain(String(v));
    }
    const builtins = builtinDefinitions().map((t) => t.name);
    expect(builtins).toEqual(["search_conversations", "remember", "forget", "show_ui"]);
    let behindBuiltins = 0;
    for (const line of calls) {
      const call = (
        line.messages[1]!.tool_calls as Array<{ function: { name: string; arguments: string } }>
      )[0]!;
      const names = line.tools.map((t) => t.function.name);
      // The app's built-in tools, when offered, come first (as in the app) and are never the one asked for.
      if (names[0] === builtins[0]) {
        behindBuiltins++;
        expect(names.slice(0, builtins.length)).toEqual(builtins);
      }
      expect(builtins).not.toContain(call.function.name);
      const offered = line.tools.map((t) => t.function).filter((t) => !builtins.includes(t.name));
      expect(offered.length).toBeGreaterThanOrEqual(2);
      expect(offered.length).toBeLessThanOrEqual(6);
      const tool = offered.find((t) => t.name === call.function.name)!;
      const args = JSON.parse(call.function.arguments) as Record<string, unknown>;
      expect(checkArguments(tool.parameters!, args)).toEqual({ ok: true });
      // Every property is written, in the schema's order (as the grammar writes them).
      expect(Object.keys(args)).toEqual(Object.keys((tool.parameters as { properties: object }).properties));
      const request = String(line.messages[0]!.content);
      for (const v of Object.values(args)) if (typeof v !== "boolean") expect(request).toContain(String(v));
    }
    expect(behindBuiltins / calls.length).toBeGreaterThan(0.35);
    expect(behindBuiltins / calls.length).toBeLessThan(0.65);
  });

  it("are the committed files, and each line is a valid tool example for the trainer", () => {
    const files = seedFiles();
    const dir = resolve(import.meta.dirname, "../../../resources/training");
    for (const name of ["agent-tools.train.jsonl", "agent-tools.heldout.jsonl"]) {
      const text = files.get(name)!;
      expect(readFileSync(join(dir, name), "utf8"), `${name} is stale: npm run seed-data`).toBe(text);
      const lines = text.trim().split("\n");
      lines.forEach((l, i) => {
        const parsed = parseExampleLine(l, i + 1);
        expect(
          typeof parsed === "object" && parsed.kind === "sft",
          `${name}:${i + 1} ${JSON.stringify(parsed)}`,
        ).toBe(true);
        expect((JSON.parse(l) as ToolSetLine).tools.length).toBeGreaterThanOrEqual(2);
      });
    }
  });
});
