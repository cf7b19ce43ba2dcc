import { describe, expect, it } from "vitest";
import { ApiError } from "../../../electron/api";
import type { Memory } from "../../../electron/api";
import { contextNote, memoriesUsedLabel, memorySourceLabel, splitMemories } from "./memory-logic";
import { MemoryController } from "./memory-controller";
import { ScriptedApi } from "../testing/scripted-api";

function memory(over: Partial<Memory> & Pick<Memory, "id">): Memory {
  return {
    text: `text ${over.id}`,
    source: "user",
    status: "active",
    conversationId: null,
    messageId: null,
    createdAt: 1,
    updatedAt: 1,
    ...over,
  };
}

function setup(initial: Memory[] = []) {
  let list = [...initial];
  let seq = 0;
  const api = new ScriptedApi({
    "memories.list": () => list,
    "memories.create": ({ text }) => {
      const m = memory({ id: `n${++seq}`, text, updatedAt: 100 + seq });
      list = [m, ...list];
      return m;
    },
    "memories.update": ({ id, text, status }) => {
      const m = list.find((x) => x.id === id);
      if (!m) throw new ApiError("not_found", "No such memory.");
      const next = { ...m, text: text ?? m.text, status: status ?? m.status };
      list = list.map((x) => (x.id === id ? next : x));
      return next;
    },
    "memories.delete": ({ id }) => {
      list = list.filter((x) => x.id !== id);
      return { deleted: true };
    },
  });
  return { api, controller: new MemoryController(api), replace: (next: Memory[]) => (list = next) };
}

describe("MemoryController", () => {
  it("discards every proposal at once and keeps the remembered ones", async () => {
    const { api, controller } = setup([
      memory({ id: "p1", source: "model", status: "proposed" }),
      memory({ id: "a", status: "active" }),
      memory({ id: "p2", source: "model", status: "proposed" }),
    ]);
    controller.setOpen(true);
    await controller.refresh();
    expect(await controller.discardProposed()).toBe(2);
    expect(api.inputs("memories.delete")).toEqual([{ id: "p1" }, { id: "p2" }]);
    expect(controller.store.getState().memories?.map((m) => m.id)).toEqual(["a"]);
    expect(controller.store.getState().busyIds).toEqual([]);
    await controller.refresh();
    expect(controller.store.getState().memories?.map((m) => m.id)).toEqual(["a"]);
  });

  it("lists on open, adds, edits, keeps a proposal and deletes", async () => {
    const { controller } = setup([
      memory({ id: "p", source: "model", status: "proposed", conversationId: "c1" }),
    ]);
    controller.setOpen(true);
    await controller.refresh();
    expect(controller.store.getState().memories?.map((m) => m.id)).toEqual(["p"]);

    expect(await controller.create("  I prefer metric units  ")).toBe(true);
    expect(controller.store.getState().memories?.[0]?.text).toBe("I prefer metric units");
    expect(await controller.edit("n1", "I prefer SI units")).toBe(true);
    expect(await controller.keep("p")).toBe(true);
    expect(controller.store.getState().memories?.find((m) => m.id === "p")?.status).toBe("active");
    expect(await controller.remove("n1")).toBe(true);
    expect(controller.store.getState().memories?.map((m) => m.id)).toEqual(["p"]);
  });

  it("refuses empty text without calling core and shows core's refusals", async () => {
    const { api, controller } = setup();
    expect(await controller.create("   ")).toBe(false);
    expect(api.inputs("memories.create")).toEqual([]);
    expect(controller.store.getState().actionError).toMatch(/Type the memory/);
    expect(await controller.edit("missing", "x")).toBe(false);
    expect(controller.store.getState().actionError).toBe("No such memory.");
    expect(controller.store.getState().busyIds).toEqual([]);
  });

  it("refreshes on memories.changed only while open", async () => {
    const { api, controller, replace } = setup();
    api.emit("memories.changed", {});
    expect(api.inputs("memories.list")).toHaveLength(0);
    controller.setOpen(true);
    await controller.refresh();
    replace([memory({ id: "r", text: "remembered from chat" })]);
    api.emit("memories.changed", {});
    await Promise.resolve();
    await Promise.resolve();
    expect(controller.store.getState().memories?.map((m) => m.id)).toEqual(["r"]);
  });
});

describe("memory wording", () => {
  it("splits proposals from active memories, newest first", () => {
    const { proposed, active } = splitMemories([
      memory({ id: "a", updatedAt: 1 }),
      memory({ id: "b", updatedAt: 3 }),
      memory({ id: "p", status: "proposed", source: "model" }),
    ]);
    expect(proposed.map((m) => m.id)).toEqual(["p"]);
    expect(active.map((m) => m.id)).toEqual(["b", "a"]);
    expect(memorySourceLabel({ source: "user" })).toBe("You said");
    expect(memorySourceLabel({ source: "model" })).toBe("Proposed by Macaron");
  });

  it("says how many memories an answer used", () => {
    expect(memoriesUsedLabel(1)).toBe("Used 1 memory");
    expect(memoriesUsedLabel(2)).toBe("Used 2 memories");
  });

  it("says when history was left out or summarized, and nothing when all of it fit", () => {
    expect(contextNote(null)).toBeNull();
    expect(contextNote({ strategy: "full", includedMessages: 4, droppedMessages: 0 })).toBeNull();
    expect(contextNote({ strategy: "sliding-window", includedMessages: 6, droppedMessages: 12 })).toBe(
      "Long conversation: 12 earlier messages left out of the model's context (sliding window)",
    );
    expect(contextNote({ strategy: "summary", includedMessages: 6, droppedMessages: 1 })).toBe(
      "Long conversation: 1 earlier message summarized to fit the model's context",
    );
  });
});
