import { describe, expect, it } from "vitest";
import type { Message } from "../../api";
import { buildPrompt, type PromptInput } from "./prompt";

function message(role: Message["role"], content: string, status: Message["status"] = "complete"): Message {
  return { role, content, status } as Message;
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
});
