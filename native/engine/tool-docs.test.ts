/**
 * The compact tool documentation (the demo Agent's): one short line per tool, and the engine's
 * tool wrapper puts exactly that text into the system prompt under a "compact" format, for the
 * tools offered (or, for a named choice, all the tools), after the app's system prompt.
 */
import { ChatMLChatWrapper } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import type { ToolCallFormat } from "../../common/engine-protocol";
import { toFunctions, toolChatWrapper } from "./tool-calls";
import { MAX_DESCRIPTION_CHARS, paramType, renderToolDocs, shortDescription } from "./tool-docs";

const compact: ToolCallFormat = {
  callPrefix: '{"tool":"',
  paramsPrefix: '","arguments":',
  callSuffix: "}",
  resultPrefix: "\n",
  resultSuffix: "\n",
  documented: "compact",
};

const tools = [
  {
    name: "water_garden",
    description: "Run the garden sprinklers. Stops by itself.",
    parameters: {
      type: "object",
      properties: {
        zone: { type: "string", enum: ["lawn", "roses"], description: "Garden zone" },
        seconds: { type: "integer", minimum: 1, maximum: 10 },
        loud: { type: "boolean" },
        note: { type: "string" },
      },
      required: ["zone", "seconds"],
    },
  },
  { name: "get-env", description: "Returns all environment variables, helpful for debugging" },
];

describe("renderToolDocs", () => {
  it("writes one line per tool: name, parameters with short types, first sentence of the description", () => {
    expect(renderToolDocs(toFunctions(tools))).toBe(
      [
        "Tools:",
        'water_garden(zone: "lawn"|"roses", seconds: number, loud: boolean, note: string) Run the garden sprinklers.',
        "get-env() Returns all environment variables, helpful for debugging",
      ].join("\n"),
    );
    expect(renderToolDocs({})).toBe("");
  });

  it("cuts long descriptions at a word and keeps types short", () => {
    const long = `Compresses a single file using gzip compression ${"and more words ".repeat(10)}`;
    const short = shortDescription(long);
    expect(short.length).toBeLessThanOrEqual(MAX_DESCRIPTION_CHARS + 1);
    expect(short).toMatch(/^Compresses a single file using gzip compression and .*\w…$/);
    expect(shortDescription(undefined)).toBe("");
    expect(paramType({ type: ["string", "null"] })).toBe("string");
    expect(paramType({ type: "array", items: {} })).toBe("list");
    expect(paramType({ oneOf: [{ type: "string" }, { type: "integer" }] })).toBe("string|number");
    expect(paramType({ enum: [1, 2, 3] })).toBe("number");
  });
});

describe("a compact format in the engine's tool wrapper", () => {
  const base = new ChatMLChatWrapper();
  const history = [
    { type: "system" as const, text: "You are Macaron, a helpful local assistant." },
    { type: "user" as const, text: "Water the roses for 5 seconds." },
  ];

  it("puts the compact documentation after the system prompt, and nothing of node-llama-cpp's own", () => {
    const functions = toFunctions(tools);
    const text = toolChatWrapper(base, { format: compact, forced: false })
      .generateContextState({ chatHistory: history, availableFunctions: functions })
      .contextText.toString();
    expect(text).toContain(
      `<|im_start|>system\nYou are Macaron, a helpful local assistant.\n\n${renderToolDocs(functions)}<|im_end|>`,
    );
    expect(text).not.toContain("||call");
    expect(text).not.toMatch(/function water_garden/);
  });

  it("documents every tool for a named choice, so the prompt is auto's", () => {
    const all = toFunctions(tools);
    const auto = toolChatWrapper(base, { format: compact, forced: false })
      .generateContextState({ chatHistory: history, availableFunctions: all })
      .contextText.toString();
    const named = toolChatWrapper(base, { format: compact, forced: true, documentedFunctions: all })
      .generateContextState({
        chatHistory: history,
        availableFunctions: toFunctions(tools, { name: "get-env" }),
      })
      .contextText.toString();
    expect(named).toBe(auto);
  });
});
