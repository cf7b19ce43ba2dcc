import { describe, expect, it } from "vitest";
import { ApiError } from "../../../electron/api";
import type { Conversation, SearchHit } from "../../../electron/api";
import { initialAppState } from "../state/app-store";
import type { AppState } from "../state/app-store";
import {
  findMessage,
  searchQuery,
  withCreatedConversation,
  withDeleteMemories,
  withDetailError,
  withoutConversation,
  withoutPendingDelete,
  withPendingDelete,
} from "./conversation-logic";
import { message } from "../testing/fixtures";

function conversation(id: string, updatedAt = 1): Conversation {
  return { id, title: id, createdAt: 1, updatedAt, adapters: "auto" };
}

function hit(conversationId: string): SearchHit {
  return {
    conversationId,
    conversationTitle: conversationId,
    messageId: null,
    role: null,
    snippet: [{ text: conversationId, match: true }],
    createdAt: 1,
  };
}

function state(over: Partial<AppState> = {}): AppState {
  return { ...initialAppState("open"), ...over };
}

describe("withCreatedConversation", () => {
  it("lists and opens the new conversation and resets the draft adapters", () => {
    const next = withCreatedConversation(state({ draftAdapters: { pinned: "a1" } }), conversation("c1"));
    expect(next).toEqual({
      conversations: [conversation("c1")],
      currentId: "c1",
      draftAdapters: "auto",
      detail: { c1: "loaded" },
      messages: { c1: [] },
    });
  });

  it("keeps the conversation the user moved to, and messages that already arrived", () => {
    const early = message({ id: "a1", role: "assistant", conversationId: "c1" });
    const next = withCreatedConversation(
      state({ currentId: "other", messages: { c1: [early] } }),
      conversation("c1"),
    );
    expect(next.currentId).toBe("other");
    expect(next.messages.c1).toEqual([early]);
  });
});

describe("withoutConversation", () => {
  it("drops the conversation from the list, the hits and the messages, and closes it", () => {
    const kept = message({ id: "m2", role: "user", conversationId: "b" });
    const next = withoutConversation(
      state({
        conversations: [conversation("a"), conversation("b")],
        searchHits: [hit("a"), hit("b")],
        messages: { a: [message({ id: "m1", role: "user", conversationId: "a" })], b: [kept] },
        currentId: "a",
      }),
      "a",
    );
    expect(next).toEqual({
      conversations: [conversation("b")],
      searchHits: [hit("b")],
      messages: { b: [kept] },
      currentId: null,
    });
  });

  it("keeps another open conversation and a null search", () => {
    const next = withoutConversation(state({ conversations: [conversation("a")], currentId: "b" }), "a");
    expect(next.currentId).toBe("b");
    expect(next.searchHits).toBeNull();
  });
});

describe("pending deletes", () => {
  it("hides the conversation and closes it only when it is open", () => {
    expect(withPendingDelete(state({ currentId: "a" }), conversation("a"))).toEqual({
      pendingDeletes: [conversation("a")],
      currentId: null,
    });
    expect(withPendingDelete(state({ currentId: "b" }), conversation("a")).currentId).toBe("b");
  });

  it("forgets the pending delete and its memories choice", () => {
    const next = withoutPendingDelete(
      state({ pendingDeletes: [conversation("a"), conversation("b")], deleteMemoryIds: ["a", "b"] }),
      "a",
    );
    expect(next).toEqual({ pendingDeletes: [conversation("b")], deleteMemoryIds: ["b"] });
  });

  it("ticks the memories choice once, last, and unticks it", () => {
    expect(withDeleteMemories(["a", "b"], "a", true)).toEqual(["b", "a"]);
    expect(withDeleteMemories([], "a", true)).toEqual(["a"]);
    expect(withDeleteMemories(["a", "b"], "a", false)).toEqual(["b"]);
  });
});

describe("withDetailError", () => {
  it("falls back to a new chat when the open conversation no longer exists", () => {
    const next = withDetailError(state({ currentId: "gone" }), "gone", new ApiError("not_found", "No such"));
    expect(next).toEqual({
      detail: { gone: "error" },
      currentId: null,
      notice: "That conversation no longer exists.",
    });
  });

  it("keeps the conversation open and says why for other failures", () => {
    const next = withDetailError(state({ currentId: "a" }), "a", new ApiError("internal", "disk full"));
    expect(next.currentId).toBe("a");
    expect(next.notice).toBe("Could not open the conversation: disk full");
  });
});

describe("searchQuery", () => {
  it("trims, caps at 500 characters, and is null for an empty query", () => {
    expect(searchQuery("  metric ")).toBe("metric");
    expect(searchQuery("   ")).toBeNull();
    expect(searchQuery("")).toBeNull();
    expect(searchQuery(` ${"x".repeat(600)}`)).toHaveLength(500);
  });
});

describe("findMessage", () => {
  it("finds a message in any conversation", () => {
    const m = message({ id: "m2", role: "assistant", conversationId: "b" });
    const messages = { a: [message({ id: "m1", role: "user", conversationId: "a" })], b: [m] };
    expect(findMessage(messages, "m2")).toBe(m);
    expect(findMessage(messages, "nope")).toBeUndefined();
  });
});
