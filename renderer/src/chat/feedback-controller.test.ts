import { describe, expect, it } from "vitest";
import { ApiError } from "../../../electron/api";
import type { Message } from "../../../electron/api";
import { FeedbackController } from "./feedback-controller";
import { message } from "../testing/fixtures";
import { ScriptedApi } from "../testing/scripted-api";

const answer = message({ id: "a1", role: "assistant", content: "The answer" });

function setup() {
  const messages = new Map<string, Message>([[answer.id, answer]]);
  const api = new ScriptedApi({
    "feedback.rate": ({ messageId, rating }) => ({ ...messages.get(messageId)!, rating }),
    "feedback.correct": ({ messageId }) => ({ ...messages.get(messageId)!, corrected: true }),
    "feedback.copied": () => ({ recorded: true }),
  });
  const controller = new FeedbackController(api, {
    get: (id) => messages.get(id),
    put: (m) => messages.set(m.id, m),
  });
  return { api, controller, messages };
}

describe("FeedbackController", () => {
  it("rates, with a trimmed reason only when there is one", async () => {
    const { api, controller, messages } = setup();
    expect(await controller.rate("a1", "good")).toBe(true);
    expect(messages.get("a1")?.rating).toBe("good");
    expect(await controller.rate("a1", "bad", "  made up a fact ")).toBe(true);
    expect(api.inputs("feedback.rate")).toEqual([
      { messageId: "a1", rating: "good" },
      { messageId: "a1", rating: "bad", reason: "made up a fact" },
    ]);
    expect(messages.get("a1")?.rating).toBe("bad");
  });

  it("a thumbs-down with a reason is one rating call (one upload item), shown at once", async () => {
    const { api, controller, messages } = setup();
    controller.beginBad("a1");
    expect(messages.get("a1")?.rating).toBe("bad");
    expect(api.inputs("feedback.rate")).toEqual([]);
    expect(await controller.finishBad("a1", "  made up a fact ")).toBe(true);
    expect(api.inputs("feedback.rate")).toEqual([
      { messageId: "a1", rating: "bad", reason: "made up a fact" },
    ]);
    expect(messages.get("a1")?.rating).toBe("bad");

    // Without a reason it is still sent once; taken back for a thumbs-up, it is not sent at all.
    messages.set("a1", { ...answer, rating: null });
    controller.beginBad("a1");
    expect(await controller.finishBad("a1", null)).toBe(true);
    messages.set("a1", { ...answer, rating: null });
    controller.beginBad("a1");
    controller.dropBad("a1");
    expect(messages.get("a1")?.rating).toBeNull();
    expect(api.inputs("feedback.rate")).toHaveLength(2);
  });

  it("shows the rating at once and restores the previous one when refused", async () => {
    const { api, controller, messages } = setup();
    let release!: () => void;
    api.handlers["feedback.rate"] = () =>
      new Promise((_, reject) => {
        release = () => reject(new ApiError("not_found", "This answer no longer exists."));
      });
    const pending = controller.rate("a1", "good");
    await Promise.resolve();
    expect(messages.get("a1")?.rating).toBe("good");
    expect(controller.store.getState().busy).toEqual(["a1"]);
    release();
    expect(await pending).toBe(false);
    expect(messages.get("a1")?.rating).toBeNull();
    expect(controller.store.getState().errors.a1).toBe("This answer no longer exists.");
    expect(controller.store.getState().busy).toEqual([]);
  });

  it("keeps the corrected text locally and marks the answer corrected", async () => {
    const { api, controller, messages } = setup();
    expect(await controller.correct("a1", "   ")).toBe(false);
    expect(api.inputs("feedback.correct")).toEqual([]);
    expect(await controller.correct("a1", "The right answer")).toBe(true);
    expect(messages.get("a1")).toMatchObject({ corrected: true, content: "The answer" });
    expect(controller.store.getState().corrections.a1).toBe("The right answer");
    expect(controller.store.getState().errors.a1).toBeUndefined();
  });

  it("records a copy and never fails the user for it", async () => {
    const { api, controller } = setup();
    await controller.copied("a1");
    api.handlers["feedback.copied"] = () => {
      throw new ApiError("internal", "down");
    };
    await expect(controller.copied("a1")).resolves.toBeUndefined();
    expect(api.inputs("feedback.copied")).toEqual([{ messageId: "a1" }, { messageId: "a1" }]);
  });
});
