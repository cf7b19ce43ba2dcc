import { describe, expect, it, vi } from "vitest";
import { ApiError } from "../../../electron/api";
import type { GateProgress, Release, UpdateSettings } from "../../../electron/api";
import { ReleaseController } from "./release-controller";
import { gateProgress, versionInfo as version } from "../testing/fixtures";
import { ScriptedApi } from "../testing/scripted-api";
import { UpdateController } from "../settings/update-controller";

const nameOf = (id: string) => (id === "coding" ? "Coding" : id);

/** The gate on the staged 2.0.0 of the tests' version lists. */
function gate(over: Partial<GateProgress>): GateProgress {
  return gateProgress({ version: "2.0.0", done: 1, ...over });
}

function release(id: number): Release {
  return {
    id,
    baseModelSha256: null,
    harnessVersion: "h",
    contractVersion: "c@1",
    adapters: [],
    reason: "promote",
    detail: null,
    createdAt: id,
  };
}

/** Lets the scripted calls' promise chains run (they resolve within a few microtasks). */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i += 1) await Promise.resolve();
}

describe("ReleaseController", () => {
  it("opens a version history, follows the gate and says when it decided", async () => {
    let list = [version({ version: "2.0.0", status: "staged", live: false }), version({})];
    const api = new ScriptedApi({ "adapters.versions": () => list });
    const c = new ReleaseController(api, nameOf);
    c.openVersions("coding");
    await settle();
    expect(c.store.getState().versions.coding?.map((v) => v.status)).toEqual(["staged", "live"]);

    api.emit("adapters.gate", gate({ done: 3 }));
    expect(c.store.getState().gates["coding@2.0.0"]?.done).toBe(3);
    expect(c.store.getState().notices).toEqual([]);

    list = [version({ version: "2.0.0" }), version({ status: "retired", live: false })];
    api.emit("adapters.gate", gate({ state: "passed", done: 6 }));
    await settle();
    expect(c.store.getState().notices.map((n) => n.text)).toEqual(["Coding 2.0.0 is live"]);
    expect(c.store.getState().versions.coding?.map((v) => v.status)).toEqual(["live", "retired"]);

    api.emit(
      "adapters.gate",
      gate({ version: "3.0.0", state: "failed", failing: ["coding-pinned", "coding-auto"] }),
    );
    const notices = c.store.getState().notices;
    expect(notices.at(-1)).toMatchObject({
      text: "Coding 3.0.0 failed the contract: coding-pinned, coding-auto",
      tone: "error",
    });
    c.dismissNotice(notices[0]!.id);
    expect(c.store.getState().notices).toHaveLength(1);
    c.dispose();
  });

  it("keeps at most a few notices, each for a while", () => {
    vi.useFakeTimers();
    try {
      const api = new ScriptedApi();
      const c = new ReleaseController(api, nameOf, 1000);
      for (let i = 0; i < 5; i++) api.emit("adapters.gate", gate({ version: `2.0.${i}`, state: "passed" }));
      expect(c.store.getState().notices.map((n) => n.text)).toEqual([
        "Coding 2.0.2 is live",
        "Coding 2.0.3 is live",
        "Coding 2.0.4 is live",
      ]);
      expect(vi.getTimerCount()).toBe(3);
      vi.advanceTimersByTime(500);
      api.emit("adapters.gate", gate({ version: "2.0.5", state: "passed" }));
      vi.advanceTimersByTime(600);
      expect(c.store.getState().notices.map((n) => n.text)).toEqual(["Coding 2.0.5 is live"]);
      c.dispose();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("rolls back, runs the contract and shows a refusal", async () => {
    const api = new ScriptedApi({
      "adapters.versions": () => [version({})],
      "adapters.rollback": ({ version: v }) => version({ version: v }),
      "adapters.promote": () => {
        throw new ApiError("invalid_input", "Version 3.0.0 is live");
      },
    });
    const c = new ReleaseController(api, nameOf);
    expect(await c.rollback("coding", "1.0.0")).toBe(true);
    expect(api.inputs("adapters.rollback")).toEqual([{ id: "coding", version: "1.0.0" }]);
    expect(c.store.getState().busy).toEqual([]);
    expect(await c.runContract("coding", "3.0.0")).toBe(false);
    expect(c.store.getState().actionError).toBe("Version 3.0.0 is live");
  });

  it("prunes and says what it freed", async () => {
    const api = new ScriptedApi({
      "adapters.versions": () => [version({})],
      "adapters.prune": () => ({ deletedFiles: 2, freedBytes: 3 * 1024 * 1024 }),
    });
    const c = new ReleaseController(api, nameOf);
    expect(await c.prune("coding")).toBe(true);
    expect(c.store.getState().pruneResult).toBe("Deleted 2 old version files, freed 3 MB.");
    expect(c.store.getState().pruning).toBeNull();
  });

  it("installs a version from a path and opens its adapter's history", async () => {
    const staged = version({ version: "1.1.0", status: "staged", live: false, source: "file" });
    const api = new ScriptedApi({
      "adapters.installVersion": () => staged,
      "adapters.versions": () => [staged, version({})],
    });
    const c = new ReleaseController(api, nameOf);
    expect(await c.installVersion("  ")).toBe(false);
    expect(c.store.getState().installError).toMatch(/Enter the path/);
    expect(await c.installVersion(" /a/coding-1.1.0.gguf ")).toBe(true);
    expect(api.inputs("adapters.installVersion")).toEqual([{ path: "/a/coding-1.1.0.gguf" }]);
    expect(c.store.getState()).toMatchObject({ openId: "coding", installing: false, installError: null });
    expect(c.store.getState().versions.coding?.map((v) => v.version)).toEqual(["1.1.0", "1.0.0"]);
  });

  it("adds new releases to a loaded history, newest first", async () => {
    const api = new ScriptedApi({ "releases.list": () => [release(2), release(1)] });
    const c = new ReleaseController(api, nameOf);
    api.emit("releases.changed", { release: release(3) });
    expect(c.store.getState().releases).toBeNull();
    await c.loadReleases();
    api.emit("releases.changed", { release: release(3) });
    expect(c.store.getState().releases?.map((r) => r.id)).toEqual([3, 2, 1]);
  });
});

describe("UpdateController", () => {
  const settings: UpdateSettings = {
    autoUpdate: true,
    registryUrl: "http://127.0.0.1:1",
    intervalMinutes: 360,
    lastCheckAt: null,
    lastError: null,
  };

  it("configures, checks and follows the progress of each version", async () => {
    let current = settings;
    const api = new ScriptedApi({
      "updates.get": () => current,
      "updates.configure": (change) => (current = { ...current, ...change }),
      "adapters.checkUpdates": () => ({
        checkedAt: 5,
        available: [{ adapterId: "coding", version: "2.0.0", sizeBytes: 10, releaseNotes: "" }],
        results: [],
      }),
    });
    const c = new UpdateController(api);
    expect(await c.configure({ autoUpdate: false, registryUrl: "  " })).toBe(true);
    expect(api.inputs("updates.configure")).toEqual([{ autoUpdate: false, registryUrl: null }]);
    expect(c.store.getState().settings?.autoUpdate).toBe(false);

    current = { ...current, registryUrl: "http://127.0.0.1:1" };
    expect(await c.check()).toBe(true);
    expect(c.store.getState().lastCheck?.available).toHaveLength(1);
    const downloading = {
      state: "downloading" as const,
      adapterId: "coding",
      version: "2.0.0",
      receivedBytes: 5,
      totalBytes: 10,
      message: null,
    };
    api.emit("adapters.updates", downloading);
    expect(c.store.getState().byVersion["coding@2.0.0"]).toEqual(downloading);
    current = { ...current, lastCheckAt: 5 };
    api.emit("adapters.updates", {
      state: "idle",
      adapterId: null,
      version: null,
      receivedBytes: null,
      totalBytes: null,
      message: null,
    });
    await settle();
    expect(c.store.getState().settings?.lastCheckAt).toBe(5);
    c.dispose();
  });

  it("shows why a check failed", async () => {
    const api = new ScriptedApi({
      "updates.get": () => settings,
      "adapters.checkUpdates": () => {
        throw new ApiError("invalid_input", "No update registry is set.");
      },
    });
    const c = new UpdateController(api);
    expect(await c.check()).toBe(false);
    expect(c.store.getState()).toMatchObject({ checking: false, checkError: "No update registry is set." });
  });
});
