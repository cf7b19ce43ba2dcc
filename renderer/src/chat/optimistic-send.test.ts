/**
 * Enter shows the question at once (before core answers chat.send), core's copy replaces it
 * without a duplicate, a failed send takes it away, and the answer's wait is measured from
 * Enter to its first text (issue 30, item 3).
 */
import { describe, expect, it } from "vitest";
import type { MethodOutput } from "../../../electron/api";
import { createAppStore } from "../state/app-store";
import type { AppState } from "../state/app-store";
import { ScriptedApi } from "../testing/scripted-api";
import { message, readyEngine } from "../testing/fixtures";
import { ChatController } from "./chat-controller";
import { withPendingQuestion } from "./chat-logic";
import { firstTokenTime } from "./MessageStats";

const immediate = (cb: () => void) => {
  cb();
  return () => {};
};

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function setup(currentId: string | null) {
  const api = new ScriptedApi();
  const store = createAppStore("open");
  store.setState({
    phase: "loaded",
    engine: readyEngine({ path: "/m/demo.gguf", name: "demo", isDemo: true }),
    currentId,
    messages: currentId ? { [currentId]: [] } : {},
  });
  let clock = 1000;
  const chat = new ChatController(api, store, immediate, () => clock);
  return { api, store, chat, advance: (ms: number) => (clock += ms) };
}

/** What the transcript shows for the open conversation (ChatView's selection). */
function shown(s: AppState) {
  const stored = s.currentId ? s.messages[s.currentId] : undefined;
  const pending =
    s.pendingQuestion && s.pendingQuestion.conversationId === s.currentId ? s.pendingQuestion.message : null;
  return (withPendingQuestion(stored, pending) ?? []).map((m) => `${m.role}:${m.content}`);
}

function sentReply(conversationId: string, text: string): MethodOutput<"chat.send"> {
  return {
    userMessage: message({ id: "u1", role: "user", conversationId, content: text, createdAt: 10 }),
    assistantMessage: message({
      id: "a1",
      role: "assistant",
      conversationId,
      status: "streaming",
      createdAt: 10,
    }),
  };
}

describe("sending shows the question at once", () => {
  it("before chat.send answers, then core's copy replaces it (one user message)", async () => {
    const { api, store, chat } = setup("c1");
    const reply = deferred<MethodOutput<"chat.send">>();
    api.handlers["chat.send"] = () => reply.promise;
    const sending = chat.send("Hello there");
    expect(shown(store.getState())).toEqual(["user:Hello there"]);
    reply.resolve(sentReply("c1", "Hello there"));
    expect(await sending).toBe(true);
    expect(shown(store.getState())).toEqual(["user:Hello there", "assistant:"]);
    expect(store.getState().messages.c1!.map((m) => m.id)).toEqual(["u1", "a1"]);
    expect(store.getState().pendingQuestion).toBeNull();
  });

  it("in a new chat, before the conversation is even created", async () => {
    const { api, store, chat } = setup(null);
    const created = deferred<MethodOutput<"conversations.create">>();
    api.handlers["conversations.create"] = () => created.promise;
    api.handlers["chat.send"] = (input) => sentReply(input.conversationId, input.text);
    const sending = chat.send("First question");
    expect(shown(store.getState())).toEqual(["user:First question"]);
    created.resolve({ id: "c9", title: "First question", createdAt: 1, updatedAt: 1, adapters: "auto" });
    expect(await sending).toBe(true);
    expect(store.getState().currentId).toBe("c9");
    expect(shown(store.getState())).toEqual(["user:First question", "assistant:"]);
  });

  it("keeps the question before an answer whose text overtook chat.send's reply", async () => {
    const { api, store, chat } = setup("c1");
    const reply = deferred<MethodOutput<"chat.send">>();
    api.handlers["chat.send"] = () => reply.promise;
    const sending = chat.send("Hi");
    chat.onDelta({ conversationId: "c1", messageId: "a1", delta: "Hello" });
    expect(shown(store.getState())).toEqual(["user:Hi", "assistant:Hello"]);
    reply.resolve(sentReply("c1", "Hi"));
    await sending;
    expect(shown(store.getState())).toEqual(["user:Hi", "assistant:Hello"]);
  });

  it("takes the question away when the send fails (the composer keeps the text)", async () => {
    const { api, store, chat } = setup("c1");
    api.handlers["chat.send"] = () => {
      throw new Error("The engine stopped.");
    };
    expect(await chat.send("Hi")).toBe(false);
    expect(shown(store.getState())).toEqual([]);
    expect(store.getState().composerError).toContain("The engine stopped.");
  });
});

describe("time to first token as the user waits it", () => {
  it("is measured from Enter to the answer's first text, routing and transport included", async () => {
    const { api, store, chat, advance } = setup("c1");
    api.handlers["chat.send"] = (input) => {
      advance(300); // routing and the round trip
      return sentReply(input.conversationId, input.text);
    };
    await chat.send("Hi");
    advance(200);
    chat.onDelta({ conversationId: "c1", messageId: "a1", delta: "" });
    expect(store.getState().answerWaitMs).toEqual({});
    chat.onDelta({ conversationId: "c1", messageId: "a1", delta: "Hel" });
    advance(50);
    chat.onDelta({ conversationId: "c1", messageId: "a1", delta: "lo" });
    expect(store.getState().answerWaitMs).toEqual({ a1: 500 });
  });

  it("shows the wait with its parts in the tooltip, or routing + first token without it", () => {
    expect(firstTokenTime({ ttftMs: 74 }, 3163, 3400)).toEqual({
      value: "3.4 s",
      parts:
        "From Enter to the first text on screen: routing 3.2 s + prompt and first token 74 ms + sending and showing 163 ms",
    });
    expect(firstTokenTime({ ttftMs: 74 }, 3163, null)).toEqual({
      value: "3.2 s",
      parts: "Routing, prompt and first token: routing 3.2 s + prompt and first token 74 ms",
    });
    expect(firstTokenTime({ ttftMs: null }, null, null)).toBeNull();
  });
});
