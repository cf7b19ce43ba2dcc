import type { Database } from "better-sqlite3";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ApiError, type LoadSettings, type ModelInfo } from "../../api";
import { openDatabase } from "../db/database";
import type { FitOptions, FitResult, FitSource, LoadedModel, LoadOptions } from "../engine/types";
import { EventBus } from "../events/event-bus";
import { SettingsStore } from "../settings/settings-store";
import { EventRecorder } from "../../../testing/core/events";
import { FakeEngine, loadedModel } from "../../../testing/engine/fake-engine";
import { LOAD_SETTINGS_KEY, ModelLoadSettings, toLoadOptions } from "./load-settings";
import { ModelService } from "./model-service";
import { ENGINE_DEFAULTS } from "./profiles";

const GB = 1e9;

function fitResult(architecture: string, options: FitOptions = {}): FitResult {
  const moe = architecture === "qwen3moe";
  return {
    contextSize: options.contextSize ?? 8192,
    gpuLayers: 0,
    totalLayers: 49,
    ramBytes: 3 * GB,
    vramBytes: 0,
    maxContextSize: 40_960,
    trainContextSize: 40_960,
    machine: {
      ramTotalBytes: 64 * GB,
      ramFreeBytes: 60 * GB,
      vramTotalBytes: 0,
      vramFreeBytes: 0,
      gpu: null,
      cpuCores: 8,
    },
    fits: true,
    summary: "Fits: 3.0 GB of 60 GB free RAM",
    model: {
      architecture,
      name: "m",
      parameters: 1e9,
      fileBytes: 2 * GB,
      expertCount: moe ? 128 : null,
      expertUsedCount: moe ? 8 : null,
    },
  };
}

/** The fake engine plus fit estimates (qwen3moe for files named moe*) and the load options it got. */
class FitEngine extends FakeEngine {
  readonly fits: { source: FitSource; options: FitOptions | undefined }[] = [];
  readonly loadOptions: (LoadOptions | undefined)[] = [];

  fit(source: FitSource, options?: FitOptions): Promise<FitResult> {
    this.fits.push({ source, options });
    const path = "path" in source ? source.path : source.url;
    return Promise.resolve(fitResult(path.includes("moe") ? "qwen3moe" : "llama", options));
  }

  override async load(
    path: string,
    onProgress?: (p: number) => void,
    options?: LoadOptions,
  ): Promise<LoadedModel> {
    this.loadOptions.push(options);
    await super.load(path, onProgress);
    this.loaded = {
      ...loadedModel(path),
      contextSize: options?.contextSize ?? 4096,
      trainContextSize: 40_960,
      settings: {
        contextSize: options?.contextSize ?? 4096,
        sequences: 4,
        gpuLayers: 0,
        totalLayers: 49,
        flashAttention: options?.flashAttention === "on" ? "on" : "off",
        kvCacheType: options?.kvCacheType ?? "f16",
        batchSize: 512,
        threads: 1,
      },
    };
    return this.loaded;
  }
}

const info = (path: string): ModelInfo => ({
  path,
  name: "M",
  architecture: "llama",
  sizeBytes: 1,
  contextLength: 40_960,
  embeddingLength: 64,
  blockCount: 2,
  isDemo: false,
});

const dbs: Database[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
});

function setup(sha: Record<string, string> = {}) {
  const db = openDatabase(":memory:");
  dbs.push(db);
  const settings = new SettingsStore(db);
  const engine = new FitEngine();
  const bus = new EventBus();
  const events = new EventRecorder((l) => bus.subscribe(l));
  const service = new ModelService({
    engine,
    events: bus,
    settings,
    inspector: {
      inspect: (path) =>
        path.endsWith(".gguf")
          ? Promise.resolve(info(path))
          : Promise.reject(new ApiError("model_invalid", `"${path}" is not a GGUF model file.`)),
    },
    ensureDemoModel: (dir) => Promise.resolve(join(dir, "demo.gguf")),
    dataDir: "/data",
    sha256Of: (path) => sha[path] ?? null,
    log: () => undefined,
  });
  return { db, settings, engine, service, events, sha };
}

const custom: LoadSettings = {
  contextSize: 16_384,
  gpuLayers: 12,
  flashAttention: "on",
  kvCacheType: "q8_0",
  batchSize: 256,
  threads: 3,
};

describe("toLoadOptions", () => {
  it("leaves out what is decided at load time", () => {
    expect(toLoadOptions(ENGINE_DEFAULTS)).toEqual({
      gpuLayers: "auto",
      flashAttention: "auto",
      kvCacheType: "f16",
    });
    expect(toLoadOptions(custom)).toEqual({ ...custom });
  });
});

describe("load settings per model", () => {
  it("a model with nothing remembered and no profile: the engine's defaults", async () => {
    const s = setup();
    expect(await s.service.settingsFor("/m/a.gguf")).toEqual({
      settings: ENGINE_DEFAULTS,
      remembered: false,
      profile: null,
    });
  });

  it("a qwen3moe model: the Tall base profile's defaults", async () => {
    const s = setup();
    const resolved = await s.service.settingsFor("/m/moe.gguf");
    expect(resolved.profile?.id).toBe("tall-base");
    expect(resolved.settings).toMatchObject({
      contextSize: 32_768,
      flashAttention: "on",
      kvCacheType: "f16",
    });
    expect(resolved.remembered).toBe(false);
  });

  it("remembers settings and loads with them next time; refuses what is not a model", async () => {
    const s = setup();
    expect(await s.service.setSettingsFor("/m/a.gguf", custom)).toEqual(custom);
    expect(await s.service.settingsFor("/m/a.gguf")).toEqual({
      settings: custom,
      remembered: true,
      profile: null,
    });
    await s.service.open("/m/a.gguf");
    expect(s.engine.loadOptions.at(-1)).toEqual(custom);
    await expect(s.service.setSettingsFor("/m/notes.txt", custom)).rejects.toMatchObject({
      code: "model_invalid",
    });
  });

  it("open with settings loads with them, remembers them, and the status says what is in use", async () => {
    const s = setup();
    const status = await s.service.open("/m/a.gguf", custom);
    expect(s.engine.loadOptions.at(-1)).toEqual(custom);
    expect(status).toMatchObject({
      state: "ready",
      settings: { contextSize: 16_384, kvCacheType: "q8_0", flashAttention: "on", sequences: 4 },
      context: { size: 16_384, trainSize: 40_960 },
    });
    expect(s.service.loadSettings.remembered("/m/a.gguf")).toEqual(custom);
    // Without settings next time: the remembered ones, no fit estimate needed.
    const fitsBefore = s.engine.fits.length;
    await s.service.open("/m/a.gguf");
    expect(s.engine.loadOptions.at(-1)).toEqual(custom);
    expect(s.engine.fits.length).toBe(fitsBefore);
  });

  it("settings that fail to load are not remembered", async () => {
    const s = setup();
    s.engine.loadError = new ApiError("model_load_failed", "Not enough memory");
    await expect(s.service.open("/m/a.gguf", custom)).rejects.toMatchObject({ code: "model_load_failed" });
    expect(s.service.loadSettings.remembered("/m/a.gguf")).toBeNull();
  });

  it("keyed by sha256 when known: a moved copy keeps its settings", async () => {
    const s = setup({ "/m/a.gguf": "abc", "/other/a-copy.gguf": "abc" });
    await s.service.setSettingsFor("/m/a.gguf", custom);
    expect(s.service.loadSettings.remembered("/other/a-copy.gguf")).toEqual(custom);
    expect(s.service.loadSettings.remembered("/m/b.gguf")).toBeNull();
    // Saving again under the same sha replaces the entry instead of adding one.
    await s.service.setSettingsFor("/other/a-copy.gguf", { ...custom, threads: 1 });
    expect(s.settings.get(LOAD_SETTINGS_KEY)).toHaveLength(1);
  });

  it("ignores damaged stored entries", () => {
    const s = setup();
    s.settings.set(LOAD_SETTINGS_KEY, [{ path: "/m/a.gguf", settings: { contextSize: "big" } }, 7, null]);
    const store = new ModelLoadSettings({ settings: s.settings, sha256Of: () => null, fit: null });
    expect(store.remembered("/m/a.gguf")).toBeNull();
    store.remember("/m/a.gguf", custom);
    expect(store.remembered("/m/a.gguf")).toEqual(custom);
  });

  it("models.fit-style estimates go to the engine for local paths (validated first) and URLs", async () => {
    const s = setup();
    const estimate = await s.service.fit({ path: "/m/a.gguf" }, { contextSize: 4096 });
    expect(estimate).toMatchObject({
      contextSize: 4096,
      fits: true,
      summary: expect.stringMatching(/^Fits/) as string,
    });
    // The API shape only: the profile's facts stay inside core.
    expect(estimate).not.toHaveProperty("model");
    await s.service.fit({ url: "https://hub.test/r/resolve/main/m.gguf", headers: { a: "b" } }, {});
    expect(s.engine.fits.at(-1)?.source).toEqual({
      url: "https://hub.test/r/resolve/main/m.gguf",
      headers: { a: "b" },
    });
    await expect(s.service.fit({ path: "/m/notes.txt" }, {})).rejects.toMatchObject({
      code: "model_invalid",
    });
  });
});
