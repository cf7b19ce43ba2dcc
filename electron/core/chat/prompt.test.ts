import { describe, expect, it } from "vitest";
import type { Message, ToolStep } from "../../api";
import { DENIED_RESULT } from "../tools/tool-results";
import { buildPrompt, type PromptInput, REPLAYED_RESULT_MAX_CHARS } from "./prompt";

function message(
  role: Message["role"],
  content: string,
  status: Message["status"] = "complete",
  steps: ToolStep[] = [],
): Message {
  return { role, content, status, steps } as Message;
}

function step(index: number, over: Partial<ToolStep>): ToolStep {
  return {
    id: `s${index}`,
    messageId: "a1",
    index,
    server: "fixture",
    tool: "set_timer",
    arguments: { minutes: 15 },
    state: "done",
    decision: "once",
    result: "Timer set for 15 minutes.",
    truncated: false,
    error: null,
    durationMs: 3,
    createdAt: 1,
    ...over,
  };
}

const transcript = [
  message("user", "first question"),
  message("assistant", "first answer"),
  message("assistant", "an answer that failed", "error"),
  message("user", "second question"),
];

const input = (overrides: Partial<PromptInput>): PromptInput => ({
  transcript,
  systemPrompt: "You are Macaron.",
  memoryBlock: "Things you know about the user:\n- likes tea",
  contextSize: 4096,
  answerTokens: 256,
  strategy: "sliding-window",
  estimate: (text) => Math.ceil(text.length / 4),
  ...overrides,
});

describe("buildPrompt", () => {
  it("keeps room for an agent turn's tool documentation, leaving older messages out first", () => {
    const long = [
      message("user", "a".repeat(1200)),
      message("assistant", "ok"),
      message("user", "b".repeat(1200)),
    ];
    const tools = [{ name: "set_timer", description: "x".repeat(600), parameters: { type: "object" } }];
    const estimate = (text: string) => text.length;
    // 2,400 tokens of turns fit a 4,096 context (room 3,430 after the answer and the margin)...
    const without = buildPrompt(input({ transcript: long, estimate, memoryBlock: null }));
    expect(without.context).toMatchObject({ strategy: "full", droppedMessages: 0 });
    // ...not beside twice the tools' ~680 bytes of JSON: the oldest messages go.
    const withTools = buildPrompt(input({ transcript: long, estimate, memoryBlock: null, tools }));
    expect(withTools.context).toMatchObject({ strategy: "sliding-window", droppedMessages: 2 });
    expect(withTools.turns.at(-1)).toEqual({ role: "user", text: "b".repeat(1200) });
    // An adapter's compact lines take about their JSON; one that learned its tools, nothing.
    const compact = buildPrompt(
      input({ transcript: long, estimate, memoryBlock: null, tools, toolFormat: { documented: "compact" } }),
    );
    expect(compact.context).toMatchObject({ strategy: "full", droppedMessages: 0 });
    const learned = buildPrompt(
      input({ transcript: long, estimate, memoryBlock: null, tools, toolFormat: { documented: false } }),
    );
    expect(learned.context).toMatchObject({ strategy: "full", droppedMessages: 0 });
  });

  it("puts the memories in the one system turn by default, and leaves failed answers out", () => {
    const { turns } = buildPrompt(input({}));
    expect(turns).toEqual([
      { role: "system", text: "You are Macaron.\n\nThings you know about the user:\n- likes tea" },
      { role: "user", text: "first question" },
      { role: "assistant", text: "first answer" },
      { role: "user", text: "second question" },
    ]);
  });

  it("without a system prompt or memories there is no system turn", () => {
    const { turns } = buildPrompt(input({ systemPrompt: "", memoryBlock: null }));
    expect(turns[0]).toEqual({ role: "user", text: "first question" });
  });

  it("replays an earlier answer's calls with the results the model saw, then its text", () => {
    const long = "x".repeat(REPLAYED_RESULT_MAX_CHARS + 50);
    const steps = [
      step(2, { tool: "echo", arguments: { text: "hi" }, state: "stopped", result: null }),
      step(1, {
        tool: "open_file",
        arguments: { path: "a" },
        state: "denied",
        decision: "deny",
        result: null,
      }),
      step(0, {}),
      step(3, { tool: "huge", arguments: {}, result: long, truncated: true }),
      step(4, { tool: "crash", arguments: {}, state: "error", result: null, error: "the server stopped" }),
    ];
    const { turns, context } = buildPrompt(
      input({
        systemPrompt: "",
        memoryBlock: null,
        transcript: [
          message("user", "set a timer"),
          message("assistant", "Done.", "complete", steps),
          message("user", "thanks"),
        ],
      }),
    );
    expect(turns).toEqual([
      { role: "user", text: "set a timer" },
      {
        role: "assistant",
        text: "",
        calls: [
          { name: "set_timer", arguments: { minutes: 15 }, result: "Timer set for 15 minutes." },
          { name: "open_file", arguments: { path: "a" }, result: DENIED_RESULT },
          { name: "huge", arguments: {}, result: `${"x".repeat(REPLAYED_RESULT_MAX_CHARS)}… (cut)` },
          { name: "crash", arguments: {}, result: "Error: the server stopped" },
        ],
      },
      { role: "assistant", text: "Done." },
      { role: "user", text: "thanks" },
    ]);
    // One message, however many calls it made.
    expect(context).toEqual({ strategy: "full", includedMessages: 3, droppedMessages: 0 });
  });

  it("counts replayed calls towards the answer's size when fitting the context", () => {
    const calls = [step(0, { result: "r".repeat(REPLAYED_RESULT_MAX_CHARS) })];
    const transcript = [
      message("user", "old question"),
      message("assistant", "old answer", "complete", calls),
      message("user", "new question"),
    ];
    const fits = (contextSize: number) =>
      buildPrompt(input({ transcript, systemPrompt: "", memoryBlock: null, contextSize, answerTokens: 0 }))
        .context;
    // ~520 tokens of calls: in a 1024 context they fit, in 512 the old exchange is dropped.
    expect(fits(1024).droppedMessages).toBe(0);
    expect(fits(512)).toEqual({ strategy: "sliding-window", includedMessages: 1, droppedMessages: 2 });
  });
});
