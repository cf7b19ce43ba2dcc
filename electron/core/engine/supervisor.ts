import { ApiError, type ErrorCode } from "../../api/errors";
import type {
  EngineErrorCode,
  EngineReply,
  EngineRequest,
  EngineRequestType,
} from "../../../common/engine-protocol";
import { parseEngineMessage, parseEngineReply } from "../../../common/engine-message-schema";
import { describeCrashes, RestartPolicy, type RestartPolicyOptions } from "./restart-policy";
import type {
  ChatTurn,
  EmbedResult,
  EngineClient,
  EngineInfo,
  EngineLifecycleEvent,
  EngineProcess,
  FitOptions,
  FitResult,
  FitSource,
  GenerateOptions,
  GenerateResult,
  LoadedModel,
  LoadOptions,
  SpawnEngine,
} from "./types";

export interface EngineSupervisorOptions extends RestartPolicyOptions {
  /**
   * Context size asked for on every load that does not name one (capped by the model's
   * training context). Default: the engine's (the training context up to 8k, as memory allows).
   */
  contextSize?: number;
  /**
   * KV-cache sequences per context (each `contextSize` tokens): the "sequence-per-set" policy
   * keeps one per adapter set. Default: the engine's (up to 8, as the free memory allows).
   */
  sequences?: number;
  /** A process that has not said "ready" by then is killed and counts as a crash. Default 60 s. */
  readyTimeoutMs?: number;
  /**
   * Folder (absolute) for conversations' saved KV states, given to the engine on every load:
   * a conversation reopened after a restart evaluates only its new tokens. Core: <dataDir>/kv.
   */
  stateDir?: string;
  /** How long close() lets the engine save its caches before it is killed. Default 5 s. */
  closeGraceMs?: number;
}

/**
 * Pass as `onToken` when only the whole text is wanted (/v1 non-streaming, background work,
 * comparisons): the supervisor then asks the engine for no "token" messages at all (`stream:
 * false`), and the result alone carries the text, one message instead of one per few tokens.
 * A function rather than `undefined` so that every EngineClient (fakes, queues) can still call it.
 */
export const NO_TOKENS: (text: string) => void = () => {};

export type SupervisorState = "starting" | "ready" | "restarting" | "failed" | "closed";

/** A request of type `K` without its id (the supervisor numbers requests). */
type RequestBody<K extends EngineRequestType> = Omit<Extract<EngineRequest, { type: K }>, "id">;

interface Pending {
  action: string;
  /** The request's type: its "result" is checked against the reply to that type. */
  type: EngineRequestType;
  /** With the "result" message's value, checked against the reply to `type` (onMessage). */
  resolve(value: unknown): void;
  reject(error: Error): void;
  onToken?: (text: string) => void;
  onProgress?: (progress: number) => void;
}

interface Child {
  proc: EngineProcess;
  pending: Map<number, Pending>;
  /**
   * Requests nobody waits for any more whose messages may still come, dropped without a word:
   * aborts (their result says nothing the generation's own result does not), requests failed
   * here (a malformed message, a relaunch), until their result or error ends them.
   */
  unanswered: Set<number>;
  ready: Promise<void>;
  markReady(): void;
  failReady(error: Error): void;
  exited: boolean;
  exit: Promise<void>;
}

const ENGINE_CODES: Record<EngineErrorCode, ErrorCode> = {
  model_load_failed: "model_load_failed",
  no_model: "no_model",
  busy: "busy",
  invalid_request: "invalid_input",
  // The adapter named in the request is unusable (missing, not a LoRA, another base): bad input.
  adapter_failed: "invalid_input",
  context_length_exceeded: "context_length_exceeded",
  aborted: "aborted",
  internal: "internal",
};

/**
 * Runs the engine in a child process and keeps it alive: requests are correlated by id,
 * a crash rejects what was in flight with "engine_crashed", and the process is restarted
 * (with backoff, giving up on a crash loop) with the last model reloaded.
 */
export class EngineSupervisor implements EngineClient {
  private child: Child;
  /** Settles when the current process is ready (and, after a crash, the model reloaded). */
  private available: Promise<void>;
  private _state: SupervisorState = "starting";
  private failure: string | null = null;
  private nextId = 1;
  private lastLoad: { path: string; options: LoadOptions } | null = null;
  private _loaded: LoadedModel | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  /** Callers waiting for the engine to be available: close() then does not linger to save. */
  private waiting = 0;
  private readonly listeners = new Set<(event: EngineLifecycleEvent) => void>();
  private readonly policy: RestartPolicy;

  constructor(
    private readonly spawn: SpawnEngine,
    private readonly options: EngineSupervisorOptions = {},
  ) {
    this.policy = new RestartPolicy(options);
    this.child = this.startChild();
    this.available = this.child.ready.then(() => this.setState("ready"));
    this.available.catch(() => {});
  }

  /** The engine batches or queues concurrent generations itself (ModelSession, AdapterGroups). */
  readonly concurrentGenerations = true;

  get loaded(): LoadedModel | null {
    return this._loaded;
  }

  /** "failed" after a crash loop: only load() (an explicit user action) starts it again. */
  get state(): SupervisorState {
    return this._state;
  }

  /** Why the engine gave up, when state is "failed". */
  get failureMessage(): string | null {
    return this.failure;
  }

  /** The engine process id (tests kill it to simulate a crash). */
  get pid(): number | undefined {
    return this.child.proc.pid;
  }

  /**
   * Load a model, replacing the current one, with `options` (reused when the engine restarts).
   * Rejects with ApiError("model_load_failed").
   */
  async load(
    path: string,
    onProgress?: (p: number) => void,
    options: LoadOptions = {},
  ): Promise<LoadedModel> {
    if (this._state === "failed") this.restartAfterFailure();
    await this.whenAvailable();
    try {
      const model = await this.request(this.loadRequest(path, options), {
        action: "loading the model",
        onProgress,
      });
      this.lastLoad = { path, options };
      this._loaded = model;
      return model;
    } catch (error) {
      // The engine frees the old model before loading the new one, even when that fails.
      if (!(error instanceof ApiError && error.code === "engine_crashed")) {
        this.lastLoad = null;
        this._loaded = null;
      }
      throw error;
    }
  }

  /** Memory estimate of a GGUF on this machine (the engine reads its header; nothing is loaded). */
  async fit(source: FitSource, options: FitOptions = {}): Promise<FitResult> {
    await this.whenAvailable();
    return await this.request({ type: "fit", source, ...options }, { action: "estimating memory" });
  }

  /** Which llama.cpp binaries the engine process runs. */
  async info(): Promise<EngineInfo> {
    await this.whenAvailable();
    return await this.request({ type: "info" }, { action: "reporting its build" });
  }

  /**
   * Replace the engine process with a fresh one (it loads llama.cpp again: a build for this
   * machine made since is picked up) and reload the model with the same options. The old
   * process first unloads (saving the conversations' caches), within `closeGraceMs`.
   */
  async relaunch(): Promise<void> {
    if (this._state === "failed") this.restartAfterFailure();
    await this.whenAvailable();
    const old = this.child;
    if (this.lastLoad && !old.exited && old.pending.size === 0) {
      await this.withGrace(this.request({ type: "unload" }, { action: "saving caches" }));
    }
    this.setState("restarting");
    this.child = this.startChild();
    this.rejectAll(old, new ApiError("engine_crashed", "The engine was restarted. Try again."));
    if (!old.exited) {
      old.proc.kill();
      await old.exit;
    }
    const child = this.child;
    this.available = child.ready.then(async () => {
      this.emit({ type: "restarted" });
      const outcome = await this.reload();
      this.setState("ready");
      if (outcome) this.emit(outcome);
    });
    this.available.catch(() => {});
    await this.whenAvailable();
  }

  /** Free the loaded model. */
  async unload(): Promise<void> {
    await this.whenAvailable();
    await this.request({ type: "unload" }, { action: "unloading the model" });
    this.lastLoad = null;
    this._loaded = null;
  }

  /** Generate an answer; see EngineClient.generate. */
  async generate(
    history: ChatTurn[],
    options: GenerateOptions,
    onToken: (text: string) => void,
    signal?: AbortSignal,
  ): Promise<GenerateResult> {
    await this.whenAvailable();
    return await this.request(
      { type: "generate", history, options, ...streamField(onToken) },
      { action: "answering", onToken, signal },
    );
  }

  /**
   * Embeddings of `texts` under the base model, one L2-normalised vector per text. Rejects
   * with ApiError("no_model") when no model is loaded.
   */
  async embed(texts: string[]): Promise<number[][]> {
    if (texts.length === 0) return [];
    await this.whenAvailable();
    return await this.request({ type: "embed", texts }, { action: "computing embeddings" });
  }

  /**
   * Embeddings with each input's token count (/v1/embeddings). Rejects with
   * ApiError("context_length_exceeded") naming the first input over EMBEDDING_MAX_TOKENS.
   * Aborting `signal` stops the engine between two decodes (ApiError "aborted"). `truncate`
   * cuts a long input to what the engine takes instead.
   */
  async embedCounted(texts: string[], signal?: AbortSignal, truncate?: boolean): Promise<EmbedResult> {
    if (texts.length === 0) return { vectors: [], tokens: [] };
    await this.whenAvailable();
    return await this.request(
      { type: "embedCounted", texts, ...(truncate ? { truncate } : {}) },
      { action: "computing embeddings", ...(signal ? { signal } : {}) },
    );
  }

  /**
   * Each text's token count under the loaded model's tokenizer. Rejects with ApiError("no_model")
   * when no model is loaded.
   */
  async countTokens(texts: string[]): Promise<number[]> {
    if (texts.length === 0) return [];
    await this.whenAvailable();
    return await this.request({ type: "countTokens", texts }, { action: "counting tokens" });
  }

  /**
   * Continue a raw prompt without the chat template (/v1/completions). Streams and aborts as
   * generate does: aborting `signal` resolves with stopReason "abort".
   */
  async complete(
    prompt: string,
    options: GenerateOptions,
    onToken: (text: string) => void,
    signal?: AbortSignal,
  ): Promise<GenerateResult> {
    await this.whenAvailable();
    return await this.request(
      { type: "complete", prompt, options, ...streamField(onToken) },
      { action: "completing", onToken, signal },
    );
  }

  /**
   * Drop a conversation's KV cache in the engine and its saved state files in `stateDir` (the
   * conversation was deleted). The engine alone owns those files: while it restarts this waits
   * for it; when none runs (it gave up after a crash loop) a short-lived one is started to delete
   * them, with nothing live to drop.
   */
  async forget(sessionKey: string, stateDir?: string): Promise<void> {
    const body = { type: "forget", sessionKey, stateDir } as const;
    const action = "forgetting a conversation";
    if (this._state !== "failed") {
      try {
        await this.whenAvailable();
        await this.request(body, { action });
        return;
      } catch (error) {
        if (!this.failure || !stateDir) throw error; // not given up: the engine could not answer
      }
    }
    if (!stateDir) return;
    const child = this.startChild();
    try {
      await child.ready;
      await this.request(body, { action }, child);
    } finally {
      child.failReady(new ApiError("internal", "The engine was shut down."));
      if (!child.exited) {
        child.proc.kill();
        await child.exit;
      }
    }
  }

  onLifecycle(listener: (event: EngineLifecycleEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Stop the engine. When it is idle it first unloads the model, which saves the conversations'
   * KV caches (at most `closeGraceMs`); requests still in flight reject with a clear error.
   */
  async close(): Promise<void> {
    if (this._state === "closed") return;
    const child = this.child;
    const idle =
      this._state === "ready" &&
      !child.exited &&
      child.pending.size === 0 &&
      this.waiting === 0 &&
      this.lastLoad;
    // Requested before the state turns "closed", which refuses new requests.
    const unloaded = idle ? this.request({ type: "unload" }, { action: "saving caches" }) : null;
    this.setState("closed");
    if (this.restartTimer) clearTimeout(this.restartTimer);
    // An engine that exits meanwhile (Ctrl-C in a terminal reaches it too) answers no more.
    if (unloaded) await this.withGrace(Promise.race([unloaded, child.exit]));
    this.rejectAll(child, new ApiError("internal", "The engine was shut down before it answered."));
    child.failReady(new ApiError("internal", "The engine was shut down."));
    if (!child.exited) {
      child.proc.kill();
      await child.exit;
    }
  }

  private loadRequest(path: string, options: LoadOptions): RequestBody<"load"> {
    const { contextSize, sequences, stateDir } = this.options;
    return { type: "load", path, contextSize, sequences, stateDir, ...definedFields(options) };
  }

  /** Wait for `work` at most `closeGraceMs`; never throws. */
  private async withGrace(work: Promise<unknown>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>(
      (resolve) => (timer = setTimeout(resolve, this.options.closeGraceMs ?? 5000)),
    );
    await Promise.race([work.catch(() => undefined), grace]);
    clearTimeout(timer);
  }

  private startChild(): Child {
    const proc = this.spawn();
    let markReady!: () => void;
    let failReady!: (error: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failReady = reject;
    });
    ready.catch(() => {});
    let exited!: () => void;
    const exit = new Promise<void>((resolve) => (exited = resolve));
    const child: Child = {
      proc,
      pending: new Map(),
      unanswered: new Set(),
      ready,
      markReady,
      failReady,
      exited: false,
      exit,
    };
    const readyTimeout = setTimeout(() => {
      process.stderr.write("[engine] no ready signal in time; killing the engine process\n");
      proc.kill();
    }, this.options.readyTimeoutMs ?? 60_000);
    void ready.then(
      () => clearTimeout(readyTimeout),
      () => clearTimeout(readyTimeout),
    );
    proc.onMessage((message) => this.onMessage(child, message));
    proc.onExit((code, signal) => {
      child.exited = true;
      clearTimeout(readyTimeout);
      exited();
      this.onExit(child, code, signal);
    });
    return child;
  }

  /**
   * A message from the engine, checked (common/engine-message-schema.ts): a malformed one fails
   * the request it names, if any, and is otherwise logged and dropped, so that neither a broken
   * engine nor a stray message can crash core or leave a caller waiting.
   */
  private onMessage(child: Child, raw: unknown): void {
    const parsed = parseEngineMessage(raw);
    if (!parsed.ok) {
      this.malformed(child, parsed.id, parsed.problem);
      return;
    }
    const message = parsed.message;
    if (message.type === "ready") {
      child.markReady();
      return;
    }
    const pending = child.pending.get(message.id);
    if (!pending) {
      const ends = message.type === "result" || message.type === "error";
      if (child.unanswered.has(message.id)) {
        if (ends) child.unanswered.delete(message.id);
      } else {
        const said = message.type === "error" ? ` (${message.code}: ${message.message.slice(0, 200)})` : "";
        process.stderr.write(
          `[engine] dropped a "${message.type}" message for request ${message.id}, which is not in flight${said}\n`,
        );
      }
      return;
    }
    switch (message.type) {
      case "token":
        pending.onToken?.(message.text);
        break;
      case "progress":
        pending.onProgress?.(message.progress);
        break;
      case "result": {
        const reply = parseEngineReply(pending.type, message.value);
        if (!reply.ok) {
          this.malformed(child, message.id, reply.problem);
          return;
        }
        child.pending.delete(message.id);
        pending.resolve(reply.value);
        break;
      }
      case "error":
        child.pending.delete(message.id);
        pending.reject(new ApiError(ENGINE_CODES[message.code], message.message));
        break;
    }
  }

  /**
   * Log a malformed message and fail the request it names: its caller gets a clear error now
   * instead of a wrong value or none; a generation is also aborted, so that the engine stops
   * spending the machine on an answer nobody will read.
   */
  private malformed(child: Child, id: number | undefined, problem: string): void {
    const pending = id === undefined ? undefined : child.pending.get(id);
    process.stderr.write(
      `[engine] malformed message dropped${id === undefined ? "" : ` (request ${id})`}: ${problem}\n`,
    );
    if (id === undefined || !pending) return;
    child.pending.delete(id);
    child.unanswered.add(id);
    if (pending.type === "generate" || pending.type === "complete") this.sendAbort(child, id);
    pending.reject(
      new ApiError("internal", `The engine sent a malformed reply while ${pending.action} (${problem}).`),
    );
  }

  private onExit(child: Child, code: number | null, signal: string | null): void {
    if (child !== this.child || this._state === "closed") return;
    const reason = signal ? `signal ${signal}` : `exit code ${code}`;
    const decision = this.policy.onCrash();
    if (decision.restart) {
      this.setState("restarting");
      this.available = this.restart(decision.delayMs);
      this.available.catch(() => {});
    } else {
      this.setState("failed");
      this.failure =
        `The engine crashed ${describeCrashes(decision)} (last: ${reason}) and was not restarted. ` +
        "Open a model again to retry, or try a smaller model.";
      this._loaded = null;
    }
    const outcome = decision.restart
      ? "It has been restarted — send your message again."
      : "It was not restarted.";
    for (const [, pending] of child.pending) {
      pending.reject(
        new ApiError(
          "engine_crashed",
          `The engine stopped unexpectedly (${reason}) while ${pending.action}. ${outcome}`,
        ),
      );
    }
    child.pending.clear();
    child.failReady(
      new ApiError("engine_crashed", `The engine stopped unexpectedly (${reason}) while starting.`),
    );
    this.emit({ type: "crashed", reason });
    if (this.failure) this.emit({ type: "gave-up", message: this.failure });
  }

  private async restart(delayMs: number): Promise<void> {
    if (delayMs > 0) await new Promise<void>((resolve) => (this.restartTimer = setTimeout(resolve, delayMs)));
    if (this._state === "closed") throw new ApiError("internal", "The engine was shut down.");
    this.child = this.startChild();
    await this.child.ready;
    this.emit({ type: "restarted" });
    const outcome = await this.reload();
    this.policy.onRecovered();
    // Ready before telling listeners, so that they can use the engine right away.
    this.setState("ready");
    if (outcome) this.emit(outcome);
  }

  /** Load the last model again in a fresh process; null when there was none. */
  private async reload(): Promise<EngineLifecycleEvent | null> {
    if (!this.lastLoad) return null;
    try {
      const { path, options } = this.lastLoad;
      const model = await this.request(this.loadRequest(path, options), {
        action: "reloading the model",
      });
      this._loaded = model;
      return { type: "model-reloaded", model };
    } catch (error) {
      if (error instanceof ApiError && error.code === "engine_crashed") throw error;
      this.lastLoad = null;
      this._loaded = null;
      return { type: "reload-failed", message: (error as Error).message };
    }
  }

  private restartAfterFailure(): void {
    this.policy.reset();
    this.failure = null;
    this.setState("starting");
    this.child = this.startChild();
    this.available = this.child.ready.then(() => this.setState("ready"));
    this.available.catch(() => {});
  }

  /** Wait until a process is ready, following restarts; throw if closed or given up. */
  private async whenAvailable(): Promise<void> {
    this.waiting++;
    try {
      await this.untilAvailable();
    } finally {
      this.waiting--;
    }
  }

  private async untilAvailable(): Promise<void> {
    for (;;) {
      if (this._state === "closed") throw new ApiError("internal", "The engine has been shut down.");
      if (this.failure) throw new ApiError("engine_crashed", this.failure);
      const current = this.available;
      try {
        await current;
        if (current === this.available) return;
      } catch (error) {
        // A crash while starting installs a new `available` (or a failure) before rejecting.
        if (current === this.available) throw error;
      }
    }
  }

  /** Send `body`; resolves with the engine's reply to a request of its type (EngineReplies). */
  private request<K extends EngineRequestType>(
    body: { type: K } & RequestBody<K>,
    hooks: {
      action: string;
      onToken?: (t: string) => void;
      onProgress?: (p: number) => void;
      signal?: AbortSignal;
    },
    child: Child = this.child,
  ): Promise<EngineReply<K>> {
    const id = this.nextId++;
    return new Promise<EngineReply<K>>((resolve, reject) => {
      // close() may have run while the caller awaited whenAvailable().
      if (this._state === "closed") return reject(new ApiError("internal", "The engine has been shut down."));
      if (child.exited)
        return reject(new ApiError("engine_crashed", "The engine stopped unexpectedly. Try again."));
      const onAbort = () => this.sendAbort(child, id);
      const cleanup = () => hooks.signal?.removeEventListener("abort", onAbort);
      child.pending.set(id, {
        action: hooks.action,
        type: body.type,
        onToken: hooks.onToken,
        onProgress: hooks.onProgress,
        // The reply to request `id`, checked against its type's reply schema in onMessage.
        resolve: (value) => (cleanup(), resolve(value as EngineReply<K>)),
        reject: (error) => (cleanup(), reject(error)),
      });
      child.proc.send({ ...body, id });
      if (hooks.signal?.aborted) onAbort();
      else hooks.signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Ask the engine to stop request `target`; the abort's own result is not waited for. */
  private sendAbort(child: Child, target: number): void {
    if (child.exited) return;
    const id = this.nextId++;
    child.unanswered.add(id);
    child.proc.send({ type: "abort", id, target } satisfies EngineRequest);
  }

  private rejectAll(child: Child, error: Error): void {
    for (const [id, pending] of child.pending) {
      child.unanswered.add(id);
      pending.reject(error);
    }
    child.pending.clear();
  }

  private setState(state: SupervisorState): void {
    if (this._state !== "closed") this._state = state;
  }

  private emit(event: EngineLifecycleEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        process.stderr.write(`[engine] lifecycle listener failed: ${String(error)}\n`);
      }
    }
  }
}

/** `stream: false` for a caller that wants no tokens (NO_TOKENS); else nothing (streamed). */
function streamField(onToken: (text: string) => void): { stream?: false } {
  return onToken === NO_TOKENS ? { stream: false } : {};
}

/** `options` without its undefined fields (they would override the supervisor's defaults). */
function definedFields<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
}
