import { describe, expect, it } from "vitest";
import type { Message } from "../../../electron/api";
import { applyDeltas } from "./chat-logic";
import { message } from "../testing/fixtures";
import { versionPlace, withEdit, withTranscript } from "./versions-logic";

function msg(over: Partial<Message> & Pick<Message, "id">): Message {
  return message({ conversationId: "c", role: "user", status: "complete", createdAt: 1000, ...over });
}

describe("versionPlace", () => {
  it("says where a message is among its versions, and which are before and after it", () => {
    expect(versionPlace(msg({ id: "b", versions: ["a", "b", "c"] }))).toEqual({
      index: 1,
      count: 3,
      previous: "a",
      next: "c",
    });
    expect(versionPlace(msg({ id: "a", versions: ["a", "b"] }))).toMatchObject({ previous: null, next: "b" });
    expect(versionPlace(msg({ id: "a" }))).toBeNull();
    expect(versionPlace(msg({ id: "a", versions: ["a"] }))).toBeNull();
  });
});

describe("withEdit", () => {
  const before = {
    c: [
      msg({ id: "q1", content: "Q1" }),
      msg({ id: "a1", role: "assistant", content: "A1", createdAt: 1001 }),
      msg({ id: "q2", content: "Q2", createdAt: 1002 }),
      msg({ id: "a2", role: "assistant", content: "A2", createdAt: 1003 }),
    ],
    other: [msg({ id: "x", conversationId: "other" })],
  };
  const user = msg({ id: "q2b", content: "Q2 edited", createdAt: 2000, versions: ["q2", "q2b"] });
  const answer = msg({ id: "a2b", role: "assistant", content: "", status: "streaming", createdAt: 2000 });

  it("puts the new version and its answer in place of the edited message and what followed it", () => {
    const next = withEdit(before, "q2", user, answer);
    expect(next.c?.map((m) => m.id)).toEqual(["q1", "a1", "q2b", "a2b"]);
    expect(next.c?.[2]?.versions).toEqual(["q2", "q2b"]);
    expect(next.other).toBe(before.other);
  });

  it("keeps what the answer streamed before chat.edit's reply came", () => {
    const streamed = applyDeltas(before, [{ conversationId: "c", messageId: "a2b", delta: "Hel" }], 2001);
    const next = withEdit(streamed, "q2", user, answer);
    expect(next.c?.map((m) => `${m.id}:${m.content}`)).toEqual([
      "q1:Q1",
      "a1:A1",
      "q2b:Q2 edited",
      "a2b:Hel",
    ]);
  });
});

describe("withTranscript", () => {
  it("replaces one conversation's messages with the branch shown", () => {
    const shown = [msg({ id: "q1" })];
    const state = { c: [msg({ id: "q1b" })], other: [msg({ id: "x", conversationId: "other" })] };
    const next = withTranscript(state, "c", shown);
    expect(next.c).toBe(shown);
    expect(next.other).toBe(state.other);
  });
});
