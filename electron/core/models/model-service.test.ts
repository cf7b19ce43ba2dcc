import type { Database } from "better-sqlite3";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ApiError, type EngineStatus, type ModelInfo } from "../../api";
import { openDatabase } from "../db/database";
import { EventBus } from "../events/event-bus";
import { SettingsStore } from "../settings/settings-store";
import { EventRecorder } from "../../../testing/core/events";
import { FakeEngine, loadedModel } from "../../../testing/engine/fake-engine";
import { LAST_MODEL_KEY, type ModelInspector, ModelService } from "./model-service";

function info(path: string): ModelInfo {
  return {
    path,
    name: "Test model",
    architecture: "llama",
    sizeBytes: 100,
    contextLength: 512,
    embeddingLength: 64,
    blockCount: 2,
    isDemo: false,
  };
}

/** Accepts paths ending in .gguf; refuses the rest like the GGUF reader would. */
const inspector: ModelInspector = {
  inspect: (path) =>
    path.endsWith(".gguf")
      ? Promise.resolve(info(path))
      : Promise.reject(new ApiError("model_invalid", `"${path}" is not a GGUF model file.`)),
};

const dbs: Database[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
});

function setup() {
  const db = openDatabase(":memory:");
  dbs.push(db);
  const engine = new FakeEngine();
  const bus = new EventBus();
  const events = new EventRecorder((l) => bus.subscribe(l));
  const settings = new SettingsStore(db);
  const demoDirs: string[] = [];
  const service = new ModelService({
    engine,
    events: bus,
    settings,
    inspector,
    ensureDemoModel: (dir) => {
      demoDirs.push(dir);
      return Promise.resolve(join(dir, "demo.gguf"));
    },
    dataDir: "/data",
    log: () => undefined,
  });
  return { engine, events, settings, service, demoDirs };
}

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

const statuses = (r: EventRecorder): Pick<EngineStatus, "state" | "progress" | "error">[] =>
  r.of("engine.status").map(({ state, progress, error }) => ({ state, progress, error }));

describe("ModelService", () => {
  it("starts idle, loads with progress, ends ready and remembers the model", async () => {
    const s = setup();
    expect(s.service.status()).toEqual({
      state: "idle",
      model: null,
      error: null,
      gpu: null,
      progress: null,
    });
    const status = await s.service.open("/models/a.gguf");
    expect(status).toEqual({
      state: "ready",
      model: info("/models/a.gguf"),
      error: null,
      gpu: null,
      progress: null,
    });
    expect(s.service.status()).toEqual(status);
    expect(statuses(s.events)).toEqual([
      { state: "loading", progress: 0, error: null },
      { state: "loading", progress: 0.5, error: null },
      { state: "loading", progress: 1, error: null },
      { state: "ready", progress: null, error: null },
    ]);
    expect(s.settings.get(LAST_MODEL_KEY)).toBe("/models/a.gguf");
  });

  it("refuses an invalid file without touching the engine or the status", async () => {
    const s = setup();
    await s.service.open("/models/a.gguf");
    const before = s.service.status();
    const err = await rejection(s.service.open("/models/notes.txt"));
    expect(err.code).toBe("model_invalid");
    expect(err.message).toMatch(/not a GGUF model file/);
    expect(s.engine.loads).toEqual(["/models/a.gguf"]);
    expect(s.service.status()).toEqual(before);
    expect((await rejection(s.service.inspect("/x.bin"))).code).toBe("model_invalid");
    expect(await s.service.inspect("/models/b.gguf")).toEqual(info("/models/b.gguf"));
  });

  it("reports a failed load as model_load_failed and an error status, and keeps running", async () => {
    const s = setup();
    await s.service.open("/models/a.gguf");
    s.engine.loadError = new ApiError("model_load_failed", "out of memory");
    const err = await rejection(s.service.open("/models/huge.gguf"));
    expect(err.code).toBe("model_load_failed");
    expect(err.message).toBe("Could not load Test model: out of memory");
    expect(s.service.status()).toMatchObject({ state: "error", model: null, error: err.message });
    expect(s.settings.get(LAST_MODEL_KEY)).toBe("/models/a.gguf");
    // The next open works again.
    s.engine.loadError = null;
    expect((await s.service.open("/models/a.gguf")).state).toBe("ready");
  });

  it("follows engine crashes: restarting, then ready again or an error", async () => {
    const s = setup();
    await s.service.open("/models/a.gguf");
    s.engine.emitLifecycle({ type: "crashed", reason: "signal SIGKILL" });
    expect(s.service.status()).toMatchObject({ state: "restarting", model: { path: "/models/a.gguf" } });
    expect(s.service.status().error).toMatch(/SIGKILL/);
    s.engine.emitLifecycle({ type: "restarted" });
    expect(s.service.status().state).toBe("restarting");
    s.engine.emitLifecycle({ type: "model-reloaded", model: loadedModel("/models/a.gguf") });
    expect(s.service.status()).toMatchObject({
      state: "ready",
      error: null,
      model: { path: "/models/a.gguf" },
    });

    s.engine.emitLifecycle({ type: "crashed", reason: "exit code 1" });
    s.engine.emitLifecycle({ type: "reload-failed", message: "file vanished" });
    expect(s.service.status()).toMatchObject({ state: "error", model: null });
    expect(s.service.status().error).toMatch(/file vanished/);

    s.engine.emitLifecycle({ type: "gave-up", message: "The engine keeps crashing." });
    expect(s.service.status()).toMatchObject({ state: "error", error: "The engine keeps crashing." });
    expect(statuses(s.events).map((e) => e.state)).toEqual([
      "loading",
      "loading",
      "loading",
      "ready",
      "restarting",
      "ready",
      "restarting",
      "error",
      "error",
    ]);
  });

  it("goes back to idle when the engine restarts without a model", () => {
    const s = setup();
    s.engine.emitLifecycle({ type: "crashed", reason: "exit code 1" });
    s.engine.emitLifecycle({ type: "restarted" });
    expect(s.service.status().state).toBe("idle");
  });

  it("opens the demo model from the data folder and marks it as demo", async () => {
    const s = setup();
    const status = await s.service.openDemo();
    expect(s.demoDirs).toEqual([join("/data", "models")]);
    expect(status).toMatchObject({
      state: "ready",
      model: { path: join("/data", "models", "demo.gguf"), isDemo: true },
    });
  });

  it("loads one model at a time, in call order", async () => {
    const s = setup();
    const [a, b] = await Promise.all([s.service.open("/m/a.gguf"), s.service.open("/m/b.gguf")]);
    expect(a.model?.path).toBe("/m/a.gguf");
    expect(b.model?.path).toBe("/m/b.gguf");
    expect(s.engine.loads).toEqual(["/m/a.gguf", "/m/b.gguf"]);
    expect(s.service.status().model?.path).toBe("/m/b.gguf");
  });

  it("reopens the remembered model only when its file still exists", async () => {
    const s = setup();
    s.settings.set(LAST_MODEL_KEY, "/definitely/not/here.gguf");
    await s.service.restoreLastModel();
    expect(s.engine.loads).toEqual([]);
    // This test file exists, but is not a model: the reopen fails quietly (status unchanged).
    s.settings.set(LAST_MODEL_KEY, import.meta.filename);
    await s.service.restoreLastModel();
    expect(s.service.status().state).toBe("idle");
  });
});
