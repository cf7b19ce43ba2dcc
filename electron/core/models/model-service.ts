import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { ApiError, FitEstimate, type EngineStatus, type LoadSettings, type ModelInfo } from "../../api";
import type { EngineClient, EngineLifecycleEvent, FitOptions, FitSource, LoadedModel } from "../engine/types";
import type { EventBus } from "../events/event-bus";
import type { SettingsStore } from "../settings/settings-store";
import { ModelLoadSettings, toLoadOptions, type ResolvedLoadSettings } from "./load-settings";

/**
 * A fit estimate of a local or remote GGUF on this machine (only its header is read). The hub
 * calls it for a file before downloading it: ModelService.fit.
 */
export type FitFunction = (
  source: FitSource,
  options: Pick<FitOptions, "contextSize" | "gpuLayers">,
) => Promise<FitEstimate>;

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
  /** The model file's sha256 when known (ModelFingerprint): load settings are remembered by it. */
  sha256Of?: (path: string) => string | null;
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
  /** The loaded model was opened as the built-in demo ("Try the demo model"). */
  private demoOpened = false;
  /** Core's reactions to a status change (see onStatus), called in order after the event. */
  private readonly statusObservers: ((status: EngineStatus) => void)[] = [];
  /** Model loads run one after another: a second open waits for the first. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly unsubscribe: () => void;
  private readonly log: (message: string, err: unknown) => void;
  /** Each model's remembered load settings and its profile's defaults. */
  readonly loadSettings: ModelLoadSettings;
  /**
   * The model path last opened as the caller wrote it, and what it resolved to: status errors
   * (a failed load, a failed reload after a crash) come from the engine, which only knows the
   * resolved path, and must name the file as given.
   */
  private shownPath: { resolved: string; given: string } | null = null;

  constructor(private readonly deps: ModelServiceDeps) {
    this.log = deps.log ?? console.error;
    this.unsubscribe = deps.engine.onLifecycle((event) => this.onLifecycle(event));
    const engine = deps.engine;
    this.loadSettings = new ModelLoadSettings({
      settings: deps.settings,
      sha256Of: deps.sha256Of ?? (() => null),
      fit: engine.fit ? (path, options) => engine.fit!({ path }, options) : null,
      log: this.log,
    });
  }

  /**
   * Whether the model answering now is the trained demo the app ships, opened with "Try the demo
   * model" (not any file whose metadata says demo, such as the untrained test fixtures).
   */
  get demoOpen(): boolean {
    return this.demoOpened && this.current.state === "ready";
  }

  /** The current engine status. */
  status(): EngineStatus {
    return this.current;
  }

  /** Read a model file's metadata without loading it. Throws ApiError("model_invalid"). */
  inspect(path: string): Promise<ModelInfo> {
    return asGiven(path, this.deps.inspector.inspect(resolve(path)));
  }

  /**
   * Validate and load a model, replacing the current one; resolves with the "ready" status.
   * With `settings` it loads with them and remembers them for this model once loaded; without,
   * with the remembered ones or the defaults (see ModelLoadSettings).
   * Throws ApiError model_invalid (file rejected, engine untouched) or model_load_failed.
   */
  open(path: string, settings?: LoadSettings): Promise<EngineStatus> {
    const resolved = resolve(path);
    return asGiven(
      path,
      this.enqueue(() => {
        this.shownPath = resolved === path ? null : { resolved, given: path };
        return this.load(resolved, false, settings);
      }),
    );
  }

  /**
   * Memory estimate of a model file (a local path, or a URL whose header is fetched) for a
   * context size and GPU layers on this machine. Throws ApiError model_invalid for a local
   * file that is not a model, invalid_input when the engine cannot read it.
   */
  fit: FitFunction = async (source, options) => {
    const engine = this.deps.engine;
    let target = source;
    if ("path" in source) {
      // The file first: a FIFO or device is refused whatever the engine can do.
      const path = resolve(source.path);
      await asGiven(source.path, this.deps.inspector.inspect(path));
      target = { path };
    }
    if (!engine.fit) throw new ApiError("internal", "This engine cannot estimate memory.");
    return FitEstimate.parse(await engine.fit(target, options));
  };

  /** The settings a model loads with, whether they are remembered, and its profile. */
  async settingsFor(path: string): Promise<ResolvedLoadSettings> {
    const file = resolve(path);
    await asGiven(path, this.deps.inspector.inspect(file));
    return this.loadSettings.resolve(file);
  }

  /** Remember the settings a model loads with next time (the loaded model is not reloaded). */
  async setSettingsFor(path: string, settings: LoadSettings): Promise<LoadSettings> {
    const file = resolve(path);
    await asGiven(path, this.deps.inspector.inspect(file));
    return this.loadSettings.remember(file, settings);
  }

  /** Generate the tiny demo model in the data folder if needed, then load it. */
  openDemo(): Promise<EngineStatus> {
    return this.enqueue(async () => {
      const path = await this.deps.ensureDemoModel(join(this.deps.dataDir, "models"));
      this.shownPath = null;
      return this.load(path, true);
    });
  }

  /**
   * Free the loaded model: the memory goes back to the system, chats say that no model is
   * loaded, and the next start does not reopen it. Answers already running finish first
   * (the engine's line). Nothing loaded: the status as it is.
   */
  unload(): Promise<EngineStatus> {
    return this.enqueue(async () => {
      const engine = this.deps.engine;
      if (!engine.unload) throw new ApiError("internal", "This engine cannot unload its model.");
      if (!engine.loaded && this.current.state !== "ready") return this.current;
      await engine.unload();
      this.demoOpened = false;
      this.shownPath = null;
      try {
        this.deps.settings.delete(LAST_MODEL_KEY);
      } catch (err) {
        this.log("could not forget the last model", err);
      }
      this.set(IDLE);
      return this.current;
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

  private async load(path: string, isDemo: boolean, explicit?: LoadSettings): Promise<EngineStatus> {
    // Validate first: a bad file must not disturb the loaded model.
    const info = await this.deps.inspector.inspect(path);
    const model: ModelInfo = isDemo ? { ...info, isDemo: true } : info;
    const settings = explicit ?? (await this.loadSettings.resolve(path, false)).settings;
    const previous = this.current;
    this.set({ state: "loading", model, error: null, gpu: null, progress: 0 });
    let lastProgress = 0;
    try {
      const loaded = await this.deps.engine.load(
        path,
        (p) => {
          const progress = Math.min(1, Math.max(0, p));
          // Progress events are for a progress bar: percent steps are enough.
          if (progress - lastProgress < 0.01 && progress < 1) return;
          lastProgress = progress;
          if (this.current.state === "loading") this.set({ ...this.current, progress });
        },
        toLoadOptions(settings),
      );
      this.set(readyStatus(model, loaded));
      this.demoOpened = isDemo;
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
      if (explicit) this.loadSettings.remember(path, explicit);
    } catch (err) {
      this.log("could not remember the last model or its settings", err);
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
        if (model) this.set(readyStatus(model, event.model));
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
    const shown = this.shownPath;
    if (shown && status.error?.includes(shown.resolved))
      status = { ...status, error: status.error.split(shown.resolved).join(shown.given) };
    this.current = status;
    this.deps.events.emit("engine.status", status);
    for (const observer of this.statusObservers) observer(status);
  }

  /**
   * Run `observer` after every status change (core hashes a loaded model, reconciles releases
   * and warms the router): an explicit in-process call, not a listener on the UI's event bus.
   */
  onStatus(observer: (status: EngineStatus) => void): void {
    this.statusObservers.push(observer);
  }
}

/**
 * `run`, with its ApiError naming the model as the caller gave it: a relative path is resolved
 * against the server's working directory, which an error (the engine's own message, say) must
 * not reveal.
 */
async function asGiven<T>(given: string, run: Promise<T>): Promise<T> {
  try {
    return await run;
  } catch (err) {
    const resolved = resolve(given);
    if (err instanceof ApiError && resolved !== given && err.message.includes(resolved))
      throw new ApiError(err.code, err.message.split(resolved).join(given));
    throw err;
  }
}

/** The "ready" status; with the settings and context in use when the engine reports them. */
function readyStatus(model: ModelInfo, loaded: LoadedModel): EngineStatus {
  const status: EngineStatus = { state: "ready", model, error: null, gpu: loaded.gpu, progress: null };
  if (loaded.settings) {
    status.settings = loaded.settings;
    status.context = { size: loaded.contextSize, trainSize: loaded.trainContextSize };
  }
  return status;
}
