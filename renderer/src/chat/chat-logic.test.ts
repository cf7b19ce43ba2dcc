import { describe, expect, it } from "vitest";
import type { Message } from "../../../electron/api";
import {
  applyDeltas,
  applyDone,
  isStreaming,
  mergeFetched,
  mergeSent,
  replaceLastAnswer,
  sortConversations,
  titleFromText,
  upsertConversation,
} from "./chat-logic";
import { message } from "../testing/fixtures";

function msg(over: Partial<Message> & Pick<Message, "id" | "conversationId">): Message {
  return message({ role: "assistant", status: "streaming", createdAt: 1000, ...over });
}

describe("applyDeltas", () => {
  it("appends deltas to the message they name, per conversation", () => {
    const state = {
      a: [
        msg({ id: "u1", conversationId: "a", role: "user", content: "hi", status: "complete" }),
        msg({ id: "m1", conversationId: "a" }),
      ],
      b: [msg({ id: "m2", conversationId: "b", content: "x" })],
    };
    const next = applyDeltas(state, [
      { conversationId: "a", messageId: "m1", delta: "Hel" },
      { conversationId: "b", messageId: "m2", delta: "y" },
      { conversationId: "a", messageId: "m1", delta: "lo" },
    ]);
    expect(next.a?.[1]?.content).toBe("Hello");
    expect(next.b?.[0]?.content).toBe("xy");
    // Untouched messages keep their identity so memoized views do not re-render.
    expect(next.a?.[0]).toBe(state.a[0]);
    expect(state.a[1]?.content).toBe("");
  });

  it("starts a streaming placeholder when the delta overtakes the chat.send answer", () => {
    const next = applyDeltas({}, [{ conversationId: "c", messageId: "m9", delta: "Hi" }], 42);
    expect(next.c).toEqual([msg({ id: "m9", conversationId: "c", content: "Hi", createdAt: 42 })]);
    expect(isStreaming(next.c)).toBe(true);
  });

  it("ignores late deltas for a message that is already final", () => {
    const state = { a: [msg({ id: "m1", conversationId: "a", content: "done", status: "complete" })] };
    const next = applyDeltas(state, [{ conversationId: "a", messageId: "m1", delta: "!" }]);
    expect(next.a?.[0]?.content).toBe("done");
  });

  it("returns the same state for an empty batch", () => {
    const state = { a: [] };
    expect(applyDeltas(state, [])).toBe(state);
  });
});

describe("applyDone", () => {
  it("replaces the streamed message with the final one, only in its conversation", () => {
    const state = {
      a: [msg({ id: "m1", conversationId: "a", content: "partial" })],
      b: [msg({ id: "m2", conversationId: "b", content: "other" })],
    };
    const final = msg({
      id: "m1",
      conversationId: "a",
      content: "partial answer",
      status: "stopped",
      stats: {
        tokens: 3,
        ttftMs: 10,
        durationMs: 50,
        tokensPerSecond: 60,
        contextTokens: 20,
        contextSize: 512,
      },
    });
    const next = applyDone(state, final);
    expect(next.a).toEqual([final]);
    expect(next.b).toBe(state.b);
    expect(isStreaming(next.a)).toBe(false);
  });

  it("adds the message when the conversation was never loaded", () => {
    const final = msg({ id: "m1", conversationId: "z", content: "x", status: "complete" });
    expect(applyDone({}, final).z).toEqual([final]);
  });
});

describe("mergeSent", () => {
  const user = msg({
    id: "u1",
    conversationId: "a",
    role: "user",
    content: "hi",
    status: "complete",
    createdAt: 2000,
  });
  const assistant = msg({ id: "m1", conversationId: "a", createdAt: 2001 });

  it("adds the user message and the streaming assistant message in order", () => {
    const next = mergeSent({ a: [] }, [user, assistant]);
    expect(next.a?.map((m) => m.id)).toEqual(["u1", "m1"]);
  });

  it("keeps text streamed before the answer arrived, and sorts by the server's time", () => {
    const early = applyDeltas({ a: [] }, [{ conversationId: "a", messageId: "m1", delta: "Hel" }], 1500);
    const next = mergeSent(early, [user, assistant]);
    expect(next.a?.map((m) => [m.id, m.content])).toEqual([
      ["u1", "hi"],
      ["m1", "Hel"],
    ]);
    expect(next.a?.[1]?.createdAt).toBe(2001);
  });

  it("does not turn a message finished by chat.done back into a streaming one", () => {
    const done = applyDone({ a: [] }, { ...assistant, content: "final", status: "complete" });
    const next = mergeSent(done, [user, assistant]);
    expect(next.a?.find((m) => m.id === "m1")).toMatchObject({ content: "final", status: "complete" });
  });

  // Core stamps a question and its answer with the same millisecond; a fast model's first
  // delta (or its whole answer) then reaches the renderer before chat.send's reply does.
  describe("when the answer's events overtook the reply (question and answer stamped alike)", () => {
    const before = [
      msg({ id: "u0", conversationId: "a", role: "user", status: "complete", createdAt: 900 }),
      msg({ id: "m0", conversationId: "a", status: "complete", createdAt: 900 }),
    ];
    const question = { ...user, createdAt: 2000 };
    const answer = { ...assistant, createdAt: 2000 };

    it("puts the question in front of the answer its deltas started", () => {
      const early = applyDeltas(
        { a: before },
        [{ conversationId: "a", messageId: "m1", delta: "Hel" }],
        2003,
      );
      const next = mergeSent(early, [question, answer]);
      expect(next.a?.map((m) => [m.id, m.content])).toEqual([
        ["u0", ""],
        ["m0", ""],
        ["u1", "hi"],
        ["m1", "Hel"],
      ]);
    });

    it("puts the question in front of the answer chat.done already finished", () => {
      const done = applyDone({ a: before }, { ...answer, content: "final", status: "complete" });
      const next = mergeSent(done, [question, answer]);
      expect(next.a?.map((m) => [m.id, m.status])).toEqual([
        ["u0", "complete"],
        ["m0", "complete"],
        ["u1", "complete"],
        ["m1", "complete"],
      ]);
      expect(next.a?.[3]?.content).toBe("final");
    });
  });
});

describe("mergeFetched", () => {
  it("prefers fetched messages but keeps longer streamed text and local newcomers", () => {
    const local = {
      a: [
        msg({ id: "m1", conversationId: "a", content: "streamed so far", createdAt: 1 }),
        msg({ id: "m2", conversationId: "a", content: "new", createdAt: 5 }),
      ],
    };
    const fetched = [
      msg({ id: "u0", conversationId: "a", role: "user", content: "q", status: "complete", createdAt: 0 }),
      msg({ id: "m1", conversationId: "a", content: "", createdAt: 1 }),
    ];
    const next = mergeFetched(local, "a", fetched);
    expect(next.a?.map((m) => [m.id, m.content])).toEqual([
      ["u0", "q"],
      ["m1", "streamed so far"],
      ["m2", "new"],
    ]);
  });
});

describe("conversations", () => {
  const c = (id: string, updatedAt: number) => ({
    id,
    title: id,
    createdAt: 0,
    updatedAt,
    adapters: "auto" as const,
  });

  it("keeps the most recently active first and replaces by id", () => {
    const list = sortConversations([c("a", 1), c("b", 3), c("c", 2)]);
    expect(list.map((x) => x.id)).toEqual(["b", "c", "a"]);
    expect(upsertConversation(list, c("a", 9)).map((x) => x.id)).toEqual(["a", "b", "c"]);
  });
});

describe("titleFromText", () => {
  it("uses the first line, shortened on a word boundary", () => {
    expect(titleFromText("  Hello there\nsecond line")).toBe("Hello there");
    expect(titleFromText("word ".repeat(30), 20)).toBe("word word word word…");
    expect(titleFromText("   ")).toBe("New chat");
  });
});

describe("replaceLastAnswer", () => {
  const q1 = msg({
    id: "u1",
    conversationId: "a",
    role: "user",
    content: "q1",
    status: "complete",
    createdAt: 1,
  });
  const a1 = msg({ id: "a1", conversationId: "a", content: "first", status: "complete", createdAt: 2 });
  const q2 = msg({
    id: "u2",
    conversationId: "a",
    role: "user",
    content: "q2",
    status: "complete",
    createdAt: 3,
  });
  const a2 = msg({ id: "a2", conversationId: "a", content: "old", status: "complete", createdAt: 4 });

  it("puts the new answer in place of the last one and keeps earlier turns", () => {
    const fresh = msg({ id: "a3", conversationId: "a", createdAt: 5 });
    const next = replaceLastAnswer({ a: [q1, a1, q2, a2] }, fresh);
    expect(next.a!.map((m) => m.id)).toEqual(["u1", "a1", "u2", "a3"]);
  });

  it("keeps text that deltas already streamed into the new answer", () => {
    const streamed = msg({ id: "a3", conversationId: "a", content: "cc", createdAt: 6 });
    const fresh = msg({ id: "a3", conversationId: "a", content: "", createdAt: 5 });
    const next = replaceLastAnswer({ a: [q1, a1, q2, a2, streamed] }, fresh);
    expect(next.a!.map((m) => [m.id, m.content])).toEqual([
      ["u1", "q1"],
      ["a1", "first"],
      ["u2", "q2"],
      ["a3", "cc"],
    ]);
  });

  it("leaves other conversations alone", () => {
    const other = [msg({ id: "x", conversationId: "b" })];
    const next = replaceLastAnswer(
      { a: [q1, a1], b: other },
      msg({ id: "a9", conversationId: "a", createdAt: 9 }),
    );
    expect(next.b).toBe(other);
    expect(next.a!.map((m) => m.id)).toEqual(["u1", "a9"]);
  });
});
