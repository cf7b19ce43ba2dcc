/**
 * Versions through the turn pipeline (chat.edit, chat.regenerate, chat.showVersion): what the
 * engine is given is the shown branch only, before and after switching.
 */
import { describe, expect, it } from "vitest";
import { ApiError, type Message } from "../../api";
import { pipelineHarness } from "../../../testing/core/pipeline-harness";

function setup() {
  const { conversations, messages, engine, events, pipeline } = pipelineHarness({
    deps: { systemPrompt: "S" },
  });
  const conversationId = conversations.create("T").id;
  /** Run a turn to its chat.done; the engine answers `answer`. */
  const turn = async <T>(answer: string, start: () => Promise<T>): Promise<T> => {
    engine.scripts.push({ tokens: [answer] });
    const done = events.next("chat.done", (d) => d.conversationId === conversationId);
    const result = await start();
    await done;
    return result;
  };
  const send = (text: string, answer: string) => turn(answer, () => pipeline.send({ conversationId, text }));
  const shown = () => messages.list(conversationId).map((m) => m.content);
  /** The history the engine got on its last call, without the system prompt. */
  const lastHistory = () => engine.calls.at(-1)?.history.map((t) => `${t.role}:${t.text}`);
  return { messages, engine, pipeline, conversationId, turn, send, shown, lastHistory };
}

async function apiError(fn: () => unknown): Promise<string> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ApiError) return err.code;
    throw err;
  }
  throw new Error("no error");
}

describe("message versions through the turn pipeline", () => {
  it("edit, regenerate and switch: the engine sees the shown branch only", async () => {
    const s = setup();
    const { userMessage: q1 } = await s.send("Q1", "A1");
    const { userMessage: q2 } = await s.send("Q2", "A2");

    // Edit Q1: the new question follows nothing; Q2 and its answer are not in its history.
    const edited = await s.turn("B1", () =>
      s.pipeline.send({ conversationId: s.conversationId, text: "Q1 edited", editOf: q1.id }),
    );
    expect(s.lastHistory()).toEqual(["system:S", "user:Q1 edited"]);
    expect(edited.userMessage.versions).toEqual([q1.id, edited.userMessage.id]);
    expect(s.shown()).toEqual(["Q1 edited", "B1"]);

    // Regenerate the answer to the edit: the old answer is kept as an earlier version.
    const { assistantMessage: b2 } = await s.turn("B1 again", () =>
      s.pipeline.regenerate({ conversationId: s.conversationId }),
    );
    expect(s.lastHistory()).toEqual(["system:S", "user:Q1 edited"]);
    expect(b2.versions).toEqual([edited.assistantMessage.id, b2.id]);
    expect(s.shown()).toEqual(["Q1 edited", "B1 again"]);

    // Back to the first question: its whole branch is the transcript again…
    const transcript: Message[] = s.pipeline.showVersion(q1.id);
    expect(transcript.map((m) => m.content)).toEqual(["Q1", "A1", "Q2", "A2"]);
    expect(transcript[0]?.versions).toEqual([q1.id, edited.userMessage.id]);
    // …and the next turn continues it (the KV cache's prefix is this branch's).
    await s.send("Q3", "A3");
    expect(s.lastHistory()).toEqual([
      "system:S",
      "user:Q1",
      "assistant:A1",
      "user:Q2",
      "assistant:A2",
      "user:Q3",
    ]);

    // Editing Q2 of this branch keeps Q1 and A1 before it.
    await s.turn("C2", () =>
      s.pipeline.send({ conversationId: s.conversationId, text: "Q2 edited", editOf: q2.id }),
    );
    expect(s.lastHistory()).toEqual(["system:S", "user:Q1", "assistant:A1", "user:Q2 edited"]);

    // The edited branch comes back as it was left: the regenerated answer shown.
    expect(s.pipeline.showVersion(edited.userMessage.id).map((m) => m.content)).toEqual([
      "Q1 edited",
      "B1 again",
    ]);
    await s.send("Q4", "A4");
    expect(s.lastHistory()).toEqual(["system:S", "user:Q1 edited", "assistant:B1 again", "user:Q4"]);
  });

  it("refuses to edit what is not a shown message of the user, and to switch while generating", async () => {
    const s = setup();
    const { userMessage: q1, assistantMessage: a1 } = await s.send("Q1", "A1");
    const edit = (id: string) => s.pipeline.send({ conversationId: s.conversationId, text: "x", editOf: id });
    expect(await apiError(() => edit(a1.id))).toBe("invalid_input");
    expect(await apiError(() => edit("missing"))).toBe("invalid_input");
    await s.turn("B1", () => edit(q1.id));
    // Q1 is hidden now: it can be shown again, not edited.
    expect(await apiError(() => edit(q1.id))).toBe("invalid_input");
    expect(await apiError(() => s.pipeline.showVersion("missing"))).toBe("not_found");

    s.engine.scripts.push({ tokens: ["slow"], end: "hang" });
    await s.pipeline.send({ conversationId: s.conversationId, text: "Q2" });
    expect(await apiError(() => s.pipeline.showVersion(q1.id))).toBe("busy");
    expect(s.shown()).toEqual(["x", "B1", "Q2", expect.any(String)]);
  });
});
