/** Which answers may carry "Saved to memory", and which memory it names (issue 13). */
import { describe, expect, it } from "vitest";
import type { Memory, Message } from "../../../electron/api";
import {
  mayBeRememberRequest,
  memorySavedFrom,
  rememberQuestionOf,
  rememberQuestions,
} from "./memory-note-logic";

function msg(id: string, role: Message["role"], content: string): Message {
  return { id, role, content } as Message;
}

function memory(id: string, messageId: string | null, source: Memory["source"] = "user"): Memory {
  return {
    id,
    text: `fact ${id}`,
    source,
    status: "active",
    conversationId: "c1",
    messageId,
    createdAt: 1,
    updatedAt: 1,
  };
}

describe("mayBeRememberRequest", () => {
  it("accepts what core's rule can store, at the start of the message", () => {
    expect(mayBeRememberRequest("remember that I prefer metric units")).toBe(true);
    expect(mayBeRememberRequest("  Remember: my cat is called Miso")).toBe(true);
    expect(mayBeRememberRequest("please, remember that I am vegan")).toBe(true);
  });

  it("leaves questions and mentions alone", () => {
    expect(mayBeRememberRequest("do you remember that film?")).toBe(false);
    expect(mayBeRememberRequest("remembering things is hard")).toBe(false);
    expect(mayBeRememberRequest("")).toBe(false);
  });
});

describe("rememberQuestions", () => {
  const transcript = [
    msg("u1", "user", "remember that I live in Lyon"),
    msg("a1", "assistant", "Noted."),
    msg("u2", "user", "what is the weather?"),
    msg("a2", "assistant", "Sunny."),
    msg("u3", "user", "Remember: I like tea"),
    msg("a3", "assistant", "First try"),
    msg("a3b", "assistant", "Answered again"),
  ];

  it("maps each answer to the remember request it replies to, and only those", () => {
    expect([...rememberQuestions(transcript)]).toEqual([
      ["a1", "u1"],
      ["a3", "u3"],
      ["a3b", "u3"],
    ]);
    expect(rememberQuestionOf(transcript, "a2")).toBeNull();
    expect(rememberQuestionOf(transcript, "a1")).toBe("u1");
    expect(rememberQuestionOf(undefined, "a1")).toBeNull();
  });

  it("builds the index once per version of the transcript", () => {
    expect(rememberQuestions(transcript)).toBe(rememberQuestions(transcript));
    const next = [...transcript, msg("u4", "user", "remember that I run"), msg("a4", "assistant", "")];
    expect(rememberQuestions(next)).not.toBe(rememberQuestions(transcript));
    expect(rememberQuestionOf(next, "a4")).toBe("u4");
  });
});

describe("memorySavedFrom", () => {
  it("finds the user memory stored from that message, not a model proposal or another message's", () => {
    const memories = [memory("m1", "u9"), memory("m2", "u1", "model"), memory("m3", "u1")];
    expect(memorySavedFrom(memories, "u1")?.id).toBe("m3");
    expect(memorySavedFrom(memories, "u2")).toBeNull();
  });
});
