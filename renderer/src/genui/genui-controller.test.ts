import { describe, expect, it } from "vitest";
import { ApiError } from "../../../electron/api";
import { createAppStore } from "../state/app-store";
import { message } from "../testing/fixtures";
import { ScriptedApi } from "../testing/scripted-api";
import { GenuiController } from "./genui-controller";

const answer = message({ id: "a1", role: "assistant", content: "{}" });

function setup(handlers: ConstructorParameters<typeof ScriptedApi>[0]) {
  const api = new ScriptedApi(handlers);
  const store = createAppStore("open");
  store.setState({ messages: { c1: [answer] } });
  return { api, store, controller: new GenuiController(api, store) };
}

describe("GenuiController", () => {
  it("sends the interaction and adds the messages it started to the transcript", async () => {
    const user = message({ id: "u2", role: "user", content: "Submitted", createdAt: 2 });
    const next = message({ id: "a2", role: "assistant", status: "streaming", createdAt: 3 });
    const { api, store, controller } = setup({
      "genui.interact": () => ({ outcome: "completed", userMessage: user, assistantMessage: next }),
    });
    await controller.interact(answer, "form", "submit", { name: "Ada" });
    expect(api.inputs("genui.interact")).toEqual([
      {
        conversationId: "c1",
        messageId: "a1",
        componentId: "form",
        action: "submit",
        values: { name: "Ada" },
      },
    ]);
    expect(store.getState().messages.c1?.map((m) => m.id)).toEqual(["a1", "u2", "a2"]);
  });

  it("leaves the transcript alone when the interaction starts no turn", async () => {
    const { store, controller } = setup({
      "genui.interact": () => ({ outcome: "abandoned", userMessage: null, assistantMessage: null }),
    });
    const before = store.getState().messages;
    await controller.interact(answer, "form", "abandon", {});
    expect(store.getState().messages).toBe(before);
  });

  it("rejects with the server's reason", async () => {
    const { controller } = setup({
      "genui.interact": () => {
        throw new ApiError("invalid_input", "No such component");
      },
    });
    await expect(controller.interact(answer, "nope", "submit", {})).rejects.toThrow("No such component");
  });
});
