import { describe, expect, it } from "vitest";
import { ApiError } from "../../../electron/api";
import type { DatabaseStatus } from "../../../electron/api";
import { DatabaseController, isDatabaseUnavailable } from "./database-controller";
import { ScriptedApi } from "../testing/scripted-api";
import { TransferController, importSummary } from "../conversations/transfer-controller";

const corrupt: DatabaseStatus = {
  state: "corrupt",
  message: "file is not a database",
  path: "/d/macaron.db",
  backups: [{ id: "b1", createdAt: 1, sizeBytes: 10 }],
};
const ok: DatabaseStatus = { ...corrupt, state: "ok", message: null };

describe("DatabaseController", () => {
  it("blocks on a bad database and reloads the app after a fresh start", async () => {
    let reloads = 0;
    const api = new ScriptedApi({ "database.status": () => corrupt, "database.startFresh": () => ok });
    const controller = new DatabaseController(api, async () => {
      reloads += 1;
      await Promise.resolve();
    });
    expect(await controller.check()).toBe(false);
    expect(controller.store.getState().status?.backups).toHaveLength(1);
    expect(await controller.startFresh()).toBe(true);
    expect(reloads).toBe(1);
    expect(controller.store.getState()).toMatchObject({ busy: false, error: null });
  });

  it("reports a failed restore and stays on the screen", async () => {
    const api = new ScriptedApi({
      "database.restoreBackup": () => {
        throw new ApiError("not_found", "That backup no longer exists.");
      },
    });
    let reloads = 0;
    const controller = new DatabaseController(api, () => Promise.resolve(void (reloads += 1)));
    expect(await controller.restoreBackup("b9")).toBe(false);
    expect(controller.store.getState().error).toBe("That backup no longer exists.");
    expect(reloads).toBe(0);
    expect(api.inputs("database.restoreBackup")).toEqual([{ id: "b9" }]);
  });

  it("does not block when the status cannot be read", async () => {
    const controller = new DatabaseController(new ScriptedApi(), () => Promise.resolve());
    expect(await controller.check()).toBe(true);
    expect(isDatabaseUnavailable(new ApiError("database_unavailable", "x"))).toBe(true);
    expect(isDatabaseUnavailable(new Error("x"))).toBe(false);
  });
});

describe("TransferController", () => {
  it("exports one conversation or all, and imports with a summary", async () => {
    const notices: string[] = [];
    const api = new ScriptedApi({
      "conversations.export": ({ id }) => ({ fileName: id ? `one-${id}.json` : "all.json", json: "{}" }),
      "conversations.import": () => ({ conversations: 1, messages: 2, memories: 1 }),
    });
    const transfer = new TransferController(api, (n) => notices.push(n));
    expect((await transfer.exportJson("c1"))?.fileName).toBe("one-c1.json");
    expect((await transfer.exportJson())?.fileName).toBe("all.json");
    expect(api.inputs("conversations.export")).toEqual([{ id: "c1" }, {}]);
    expect(await transfer.importJson('{"a":1}')).toEqual({ conversations: 1, messages: 2, memories: 1 });
    expect(notices).toEqual(["Imported 1 conversation, 2 messages and 1 memory."]);
  });

  it("shows the server's reason for a refused import", async () => {
    const notices: string[] = [];
    const api = new ScriptedApi({
      "conversations.import": () => {
        throw new ApiError("invalid_input", "This is not a Macaron export file.");
      },
    });
    const transfer = new TransferController(api, (n) => notices.push(n));
    expect(await transfer.importJson("")).toBeNull();
    expect(await transfer.importJson("[1,2]")).toBeNull();
    expect(notices).toEqual([
      "Import failed: the file is empty.",
      "Import failed: This is not a Macaron export file.",
    ]);
    expect(importSummary({ conversations: 2, messages: 1, memories: 0 })).toBe(
      "Imported 2 conversations, 1 message and 0 memories.",
    );
  });
});
