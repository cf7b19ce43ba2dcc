import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { ApiError, type EngineStatus, type ModelInfo } from "../../api";
import type { EngineClient, EngineLifecycleEvent } from "../engine/types";
import type { EventBus } from "../events/event-bus";
import type { SettingsStore } from "../settings/settings-store";

/** Reads and validates a GGUF file without loading it; throws ApiError("model_invalid") for bad files. */
export interface ModelInspector {
  inspect(path: string): Promise<ModelInfo>;
}

export interface ModelServiceDeps {
  engine: EngineClient;
  events: EventBus;
  settings: SettingsStore;
  inspector: ModelInspector;
  /** Writes the demo model into the given folder if needed and returns its path. */
  ensureDemoModel: (dir: string) => Promise<string>;
  dataDir: string;
  log?: (message: string, err: unknown) => void;
}

export const LAST_MODEL_KEY = "models.lastPath";

const IDLE: EngineStatus = { state: "idle", model: null, error: null, gpu: null, progress: null };

/**
 * Which model is loaded and how the engine is doing. Validates files before the engine sees
 * them, turns engine failures into user-facing errors and emits `engine.status` on every change.
 */
export class ModelService {
  private current: EngineStatus = IDLE;
  /** Model loads run one after another: a second open waits for the first. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly unsubscribe: () => void;
  private readonly log: (message: string, err: unknown) => void;

  constructor(private readonly deps: ModelServiceDeps) {
    this.log = deps.log ?? console.error;
    this.unsubscribe = deps.engine.onLifecycle((event) => this.onLifecycle(event));
  }

  /** The current engine status. */
  status(): EngineStatus {
    return this.current;
  }

  /** Read a model file's metadata without loading it. Throws ApiError("model_invalid"). */
  inspect(path: string): Promise<ModelInfo> {
    return this.deps.inspector.inspect(resolve(path));
  }

  /**
   * Validate and load a model, replacing the current one; resolves with the "ready" status.
   * Throws ApiError model_invalid (file rejected, engine untouched) or model_load_failed.
   */
  open(path: string): Promise<EngineStatus> {
    return this.enqueue(() => this.load(resolve(path), false));
  }

  /** Generate the tiny demo model in the data folder if needed, then load it. */
  openDemo(): Promise<EngineStatus> {
    return this.enqueue(async () => {
      const path = await this.deps.ensureDemoModel(join(this.deps.dataDir, "models"));
      return this.load(path, true);
    });
  }

  /** At start-up: reopen the model used last time, if its file still exists. Never throws. */
  async restoreLastModel(): Promise<void> {
    const path = this.deps.settings.get(LAST_MODEL_KEY);
    if (typeof path !== "string" || !existsSync(path)) return;
    try {
      await this.open(path);
    } catch (err) {
      this.log(`could not reopen the last model ${path}`, err);
    }
  }

  /** Stop listening to the engine; waits for a load in progress to settle. */
  async close(): Promise<void> {
    this.unsubscribe();
    await this.queue.catch(() => undefined);
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async load(path: string, isDemo: boolean): Promise<EngineStatus> {
    // Validate first: a bad file must not disturb the loaded model.
    const info = await this.deps.inspector.inspect(path);
    const model: ModelInfo = isDemo ? { ...info, isDemo: true } : info;
    const previous = this.current;
    this.set({ state: "loading", model, error: null, gpu: null, progress: 0 });
    let lastProgress = 0;
    try {
      const loaded = await this.deps.engine.load(path, (p) => {
        const progress = Math.min(1, Math.max(0, p));
        // Progress events are for a progress bar: percent steps are enough.
        if (progress - lastProgress < 0.01 && progress < 1) return;
        lastProgress = progress;
        if (this.current.state === "loading") this.set({ ...this.current, progress });
      });
      this.set({ state: "ready", model, error: null, gpu: loaded.gpu, progress: null });
    } catch (err) {
      const message = `Could not load ${model.name}: ${err instanceof Error ? err.message : String(err)}`;
      if (!(err instanceof ApiError)) this.log("model load failed", err);
      const engineKeptPrevious =
        previous.state === "ready" &&
        previous.model !== null &&
        this.deps.engine.loaded?.path === previous.model.path;
      this.set(
        engineKeptPrevious
          ? previous
          : { state: "error", model: null, error: message, gpu: null, progress: null },
      );
      throw new ApiError("model_load_failed", message);
    }
    try {
      this.deps.settings.set(LAST_MODEL_KEY, path);
    } catch (err) {
      this.log("could not remember the last model", err);
    }
    return this.current;
  }

  private onLifecycle(event: EngineLifecycleEvent): void {
    const model = this.current.model;
    switch (event.type) {
      case "crashed":
        this.set({
          state: "restarting",
          model,
          error: `The engine stopped unexpectedly (${event.reason}). Restarting it…`,
          gpu: this.current.gpu,
          progress: null,
        });
        break;
      case "restarted":
        // Without a model there is nothing to reload: the engine is simply back.
        if (!this.deps.engine.loaded) this.set(IDLE);
        break;
      case "model-reloaded":
        if (model) this.set({ state: "ready", model, error: null, gpu: event.model.gpu, progress: null });
        break;
      case "reload-failed":
        this.set({
          state: "error",
          model: null,
          error: `The engine restarted but could not reload the model: ${event.message}`,
          gpu: null,
          progress: null,
        });
        break;
      case "gave-up":
        // Crash loop: the supervisor waits for an explicit open before trying again.
        this.set({ state: "error", model: null, error: event.message, gpu: null, progress: null });
        break;
    }
  }

  private set(status: EngineStatus): void {
    this.current = status;
    this.deps.events.emit("engine.status", status);
  }
}
