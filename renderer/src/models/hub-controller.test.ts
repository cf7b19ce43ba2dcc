import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../../electron/api";
import type { HubModel, LoadSettings } from "../../../electron/api";
import { AppController } from "../state/app-controller";
import { SEARCH_DEBOUNCE_MS } from "./hub-controller";
import { readyEngine } from "../testing/fixtures";
import {
  download,
  engineBuild,
  fitEstimate,
  hubFile,
  hubModel,
  hubRepo,
  loadSettings,
  localModel,
  recommended,
} from "../testing/hub-fixtures";
import { ScriptedApi } from "../testing/scripted-api";

/** Core with no model, no conversations and nothing downloaded; each test adds what it needs. */
function scriptedApi(): ScriptedApi {
  return new ScriptedApi({
    "models.status": () => ({ state: "idle", model: null, error: null, gpu: null, progress: null }),
    "conversations.list": () => [],
    "adapters.list": () => [],
    "models.local": () => [],
    "hub.downloads": () => [],
    "hub.recommended": () => [recommended("small/one", { quant: "Q8_0" })],
    "hub.tokenStatus": () => ({ set: false, storage: "file" }),
  });
}

let controller: AppController | undefined;
afterEach(() => {
  controller?.dispose();
  controller = undefined;
  vi.useRealTimers();
});

async function started(api: ScriptedApi): Promise<AppController> {
  controller = new AppController(api, (flush) => {
    flush();
    return () => {};
  });
  await controller.start(null);
  await flushPromises();
  return controller;
}

async function flushPromises(): Promise<void> {
  for (let i = 0; i < 10; i += 1) await Promise.resolve();
}

describe("HubController", () => {
  it("opens on the recommended list and the token status", async () => {
    const api = scriptedApi();
    const c = await started(api);
    c.openModels("find");
    await flushPromises();
    expect(c.hub.store.getState()).toMatchObject({
      open: true,
      tab: "find",
      recommended: [{ repo: "small/one" }],
      token: { set: false, storage: "file" },
      results: null,
    });
  });

  it("searches once typing pauses, and a slower older answer never replaces a newer one", async () => {
    vi.useFakeTimers();
    const api = scriptedApi();
    const c = await started(api);
    const answers: Array<(list: HubModel[]) => void> = [];
    api.handlers["hub.search"] = () => new Promise<HubModel[]>((resolve) => answers.push(resolve));
    c.hub.setQuery("q");
    c.hub.setQuery("qw");
    c.hub.setQuery("qwen");
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS - 10);
    expect(api.calls.filter(([m]) => m === "hub.search")).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(20);
    expect(api.calls.filter(([m]) => m === "hub.search")).toEqual([
      ["hub.search", { query: "qwen", limit: 30 }],
    ]);
    // Enter searches at once with the box's text.
    c.hub.setQuery("llama");
    void c.hub.search();
    await flushPromises();
    expect(answers).toHaveLength(2);
    answers[1]!([hubModel("meta/llama-GGUF")]);
    await flushPromises();
    answers[0]!([hubModel("qwen/qwen-GGUF")]);
    await flushPromises();
    expect(c.hub.store.getState()).toMatchObject({
      results: [{ repo: "meta/llama-GGUF" }],
      searchedQuery: "llama",
      searching: false,
    });
    // Clearing the box goes back to the recommended list.
    c.hub.setQuery("");
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS + 10);
    expect(c.hub.store.getState().results).toBeNull();
  });

  it("opens a repo on the recommended quantization and estimates its fit before any download", async () => {
    const api = scriptedApi();
    api.handlers["hub.repo"] = () => hubRepo();
    api.handlers["hub.fit"] = ({ contextSize }) => fitEstimate({ contextSize: contextSize ?? 4096 });
    const c = await started(api);
    await c.hub.openRepo("o/m", "Q8_0");
    await flushPromises();
    expect(c.hub.store.getState()).toMatchObject({ selectedFile: "m-Q8_0.gguf", fit: { status: "done" } });
    expect(api.calls).toContainEqual(["hub.fit", { repo: "o/m", file: "m-Q8_0.gguf", gpuLayers: "auto" }]);
    c.hub.setFitInput({ contextSize: 8192 });
    await new Promise((r) => setTimeout(r, SEARCH_DEBOUNCE_MS + 20));
    await flushPromises();
    expect(c.hub.store.getState().fit.estimate?.contextSize).toBe(8192);
    expect(api.calls.filter(([m]) => m === "hub.download")).toHaveLength(0);
  });

  it("a gated repo asks for a token; saving one tries again", async () => {
    const api = scriptedApi();
    let token = false;
    api.handlers["hub.repo"] = () => {
      if (!token) throw new ApiError("forbidden", "Access to o/gated is restricted: it is gated (HTTP 403).");
      return hubRepo({ repo: "o/gated", gated: true });
    };
    api.handlers["hub.fit"] = () => fitEstimate();
    api.handlers["hub.setToken"] = ({ token: t }) => {
      token = t !== null;
      return { set: token, storage: "file" };
    };
    const c = await started(api);
    await c.hub.openRepo("o/gated");
    expect(c.hub.store.getState().repo).toMatchObject({ status: "error", error: { kind: "token" } });
    expect(await c.hub.setToken("  ")).toBe(false);
    expect(c.hub.store.getState().tokenError).toMatch(/paste/i);
    expect(await c.hub.setToken(" hf_secret ")).toBe(true);
    expect(api.calls).toContainEqual(["hub.setToken", { token: "hf_secret" }]);
    await flushPromises();
    expect(c.hub.store.getState()).toMatchObject({ repo: { status: "loaded" }, token: { set: true } });
  });

  it("a repo without GGUF files selects nothing and asks no fit", async () => {
    const api = scriptedApi();
    api.handlers["hub.repo"] = () =>
      hubRepo({ files: [{ ...hubFile("lora.gguf", null, 0.01), isAdapter: true }] });
    const c = await started(api);
    await c.hub.openRepo("o/m");
    expect(c.hub.store.getState()).toMatchObject({ repo: { status: "loaded" }, selectedFile: null });
    expect(api.calls.some(([m]) => m === "hub.fit")).toBe(false);
  });

  it("keeps an unverified download only when the user accepts it, then lists the model", async () => {
    const api = scriptedApi();
    api.handlers["hub.download"] = () => download({ state: "queued" });
    api.handlers["hub.acceptUnverified"] = () => download({ state: "done", downloadedBytes: 100 });
    const c = await started(api);
    await c.hub.download("o/m", "m-Q4_K_M.gguf");
    api.emit("hub.download", download({ state: "unverified", downloadedBytes: 100, unverified: [] }));
    await flushPromises();
    expect(c.hub.store.getState().downloads).toMatchObject([{ state: "unverified" }]);
    // Not a model yet.
    expect(api.calls.filter(([m]) => m === "hub.acceptUnverified")).toHaveLength(0);
    api.handlers["models.local"] = () => [localModel()];
    expect(await c.hub.acceptUnverified("d1")).toBe(true);
    expect(api.calls.filter(([m]) => m === "hub.acceptUnverified")).toEqual([
      ["hub.acceptUnverified", { id: "d1" }],
    ]);
    api.emit("hub.download", download({ state: "done", downloadedBytes: 100 }));
    await flushPromises();
    expect(c.localModels.store.getState().models).toMatchObject([{ fileName: "m-Q4_K_M.gguf" }]);
  });

  it("follows hub.download events and lists the new model once one is done", async () => {
    const api = scriptedApi();
    api.handlers["hub.download"] = () => download({ state: "queued" });
    api.handlers["hub.pause"] = () => download({ state: "paused", downloadedBytes: 40 });
    const c = await started(api);
    await c.hub.download("o/m", "m-Q4_K_M.gguf");
    api.emit("hub.download", download({ state: "downloading", downloadedBytes: 30 }));
    expect(c.hub.store.getState().downloads).toMatchObject([{ state: "downloading", downloadedBytes: 30 }]);
    expect(await c.hub.pause("d1")).toBe(true);
    expect(c.hub.store.getState().downloads).toMatchObject([{ state: "paused" }]);

    api.handlers["models.local"] = () => [localModel()];
    api.emit("hub.download", download({ state: "done", downloadedBytes: 100 }));
    await flushPromises();
    expect(c.localModels.store.getState().models).toMatchObject([{ fileName: "m-Q4_K_M.gguf" }]);
    const lists = api.calls.filter(([m]) => m === "models.local").length;
    api.emit("hub.download", download({ state: "done", downloadedBytes: 100 }));
    await flushPromises();
    expect(api.calls.filter(([m]) => m === "models.local")).toHaveLength(lists);
  });

  it("lists this session's downloads; ones finished before are left to My models", async () => {
    const api = scriptedApi();
    api.handlers["hub.downloads"] = () => [
      download({ id: "old", state: "done", downloadedBytes: 100, startedAt: 1 }),
      download({ id: "paused", state: "paused", downloadedBytes: 40, startedAt: 2 }),
    ];
    const c = await started(api);
    expect(c.hub.store.getState()).toMatchObject({ hiddenDownloads: ["old"] });
    api.emit("hub.download", download({ id: "paused", state: "done", downloadedBytes: 100, startedAt: 2 }));
    await c.hub.refreshDownloads();
    expect(c.hub.store.getState().hiddenDownloads).toEqual(["old"]);
    c.hub.dismiss("paused");
    expect(c.hub.store.getState().hiddenDownloads).toEqual(["old", "paused"]);
  });

  it("a download that cannot start says why, with the kind of failure", async () => {
    const api = scriptedApi();
    api.handlers["hub.download"] = () => {
      throw new ApiError("internal", "The hub answered 429 Too Many Requests");
    };
    const c = await started(api);
    expect(await c.hub.download("o/m", "m.gguf")).toBeNull();
    expect(c.hub.store.getState().downloadError).toEqual({
      message: "The hub answered 429 Too Many Requests",
      kind: "rate_limited",
    });
  });
});

describe("LocalModelsController", () => {
  it("shows the server's reason when it refuses to delete the loaded model", async () => {
    const api = scriptedApi();
    api.handlers["models.local"] = () => [localModel()];
    api.handlers["models.delete"] = () => {
      throw new ApiError("busy", "This model is loaded; load another one before deleting it.");
    };
    const c = await started(api);
    expect(await c.localModels.remove("/data/models/m-Q4_K_M.gguf")).toBe(false);
    expect(c.localModels.store.getState()).toMatchObject({
      deleteError: {
        path: "/data/models/m-Q4_K_M.gguf",
        message: "This model is loaded; load another one before deleting it.",
      },
      models: [{ fileName: "m-Q4_K_M.gguf" }],
      deleting: null,
    });
    api.handlers["models.delete"] = () => ({ deleted: true });
    api.handlers["models.local"] = () => [];
    expect(await c.localModels.remove("/data/models/m-Q4_K_M.gguf")).toBe(true);
    expect(c.localModels.store.getState().models).toEqual([]);
  });

  it("the load dialog reads the settings, estimates the fit and loads with what was chosen", async () => {
    const api = scriptedApi();
    const path = "/data/models/m-Q4_K_M.gguf";
    api.handlers["models.loadSettings"] = () => ({
      settings: loadSettings({ contextSize: 8192 }),
      remembered: true,
      profile: null,
    });
    api.handlers["models.fit"] = ({ contextSize }) => fitEstimate({ contextSize: contextSize ?? 4096 });
    let opened: { path: string; settings?: LoadSettings } | null = null;
    api.handlers["models.open"] = (input) => {
      opened = input;
      return readyEngine({ path, name: "M", isDemo: false });
    };
    const c = await started(api);
    await c.localModels.openLoadDialog({ path, name: "M" });
    await flushPromises();
    expect(c.localModels.store.getState().load).toMatchObject({
      status: "ready",
      remembered: true,
      fit: { contextSize: 8192 },
    });
    expect(api.calls).toContainEqual(["models.fit", { path, contextSize: 8192, gpuLayers: "auto" }]);
    const chosen = loadSettings({ contextSize: 2048, gpuLayers: 0, kvCacheType: "q8_0" });
    expect(await c.localModels.load(path, chosen)).toBe(true);
    expect(opened).toEqual({ path, settings: chosen });
    expect(c.localModels.store.getState().load).toBeNull();
    expect(c.store.getState().engine?.model?.path).toBe(path);
  });

  it("the context chosen in the hub's fit estimate is the one the load dialog starts with", async () => {
    const api = scriptedApi();
    const path = "/data/models/m-Q4_K_M.gguf";
    api.handlers["models.loadSettings"] = () => ({
      settings: loadSettings({ contextSize: 8192 }),
      remembered: false,
      profile: null,
    });
    api.handlers["models.fit"] = ({ contextSize }) => fitEstimate({ contextSize: contextSize ?? 4096 });
    const c = await started(api);
    c.hub.setFitInput({ contextSize: 16384 });
    await c.localModels.openLoadDialog({ path, contextSize: c.hub.store.getState().contextSize });
    await flushPromises();
    expect(c.localModels.store.getState().load?.settings?.contextSize).toBe(16384);
    expect(api.calls).toContainEqual(["models.fit", { path, contextSize: 16384, gpuLayers: "auto" }]);
  });

  it("a failed load keeps the dialog open with the engine's message", async () => {
    const api = scriptedApi();
    const path = "/data/models/big.gguf";
    api.handlers["models.loadSettings"] = () => ({
      settings: loadSettings(),
      remembered: false,
      profile: null,
    });
    api.handlers["models.fit"] = () => fitEstimate({ fits: false });
    api.handlers["models.open"] = () => {
      throw new ApiError("model_load_failed", "Not enough memory for a 131,072-token context.");
    };
    const c = await started(api);
    await c.localModels.openLoadDialog({ path });
    expect(await c.localModels.load(path, loadSettings())).toBe(false);
    expect(c.localModels.store.getState().load).toMatchObject({
      name: "big.gguf",
      opening: false,
      openError: "Not enough memory for a 131,072-token context.",
    });
  });
});

describe("EngineBuildController", () => {
  it("shows the build's progress from events and its log when it fails", async () => {
    const api = scriptedApi();
    api.handlers["engine.buildStatus"] = () => engineBuild();
    api.handlers["engine.build"] = () => engineBuild({ state: "building", progress: 0 });
    const c = await started(api);
    await c.engineBuild.load();
    expect(await c.engineBuild.build()).toBe(true);
    api.emit("engine.build", engineBuild({ state: "building", progress: 0.5 }));
    expect(c.engineBuild.store.getState().status).toMatchObject({ state: "building", progress: 0.5 });
    api.emit(
      "engine.build",
      engineBuild({ state: "failed", error: "cmake not found", log: ["-- cmake: not found"] }),
    );
    expect(c.engineBuild.store.getState().status).toMatchObject({ state: "failed", using: "prebuilt" });
  });
});

describe("Adapters from the hub", () => {
  it("lists adapters for the base with their reason and shows a refused install's message", async () => {
    const api = scriptedApi();
    api.handlers["hub.adaptersForBase"] = () => [
      {
        repo: "o/lora",
        files: [{ ...hubFile("coding.gguf", null, 0.01), kind: "gguf" }],
        reason: "base_model: o/m (llama, 64-dim)",
      },
    ];
    api.handlers["hub.installAdapter"] = () => {
      throw new ApiError("invalid_input", "This adapter was made for another base model.");
    };
    const c = await started(api);
    await c.adapters.findForBase("  coding ");
    expect(api.calls).toContainEqual(["hub.adaptersForBase", { query: "coding" }]);
    expect(c.adapters.store.getState().hub.results).toMatchObject([
      { reason: "base_model: o/m (llama, 64-dim)" },
    ]);
    expect(await c.adapters.installFromHub("o/lora", "coding.gguf")).toBe(false);
    expect(c.adapters.store.getState().hub).toMatchObject({
      installing: [],
      installErrors: { "o/lora/coding.gguf": "This adapter was made for another base model." },
    });
  });
});
