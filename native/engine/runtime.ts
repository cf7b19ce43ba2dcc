import { batchWindowFromEnv, DeltaBatcher } from "../../common/delta-batcher";
import { deleteSavedStates } from "./kv-state-store";
import { EngineFailure } from "./engine-failure";
import { estimateFit } from "./fit-estimate";
import { AdapterError } from "./live-adapters";
import type { LlamaBackend } from "./llama-backend";
import { ModelLoadError, ModelSession } from "./model-session";
import type {
  EngineMessage,
  EngineReply,
  GenerateResult,
  EngineRequest,
  EngineRequestType,
} from "../../common/engine-protocol";
import { parseEngineRequest } from "../../common/engine-request-schema";
import { SharedLock } from "./shared-lock";
import { ToolRequestError } from "../../common/grammar-schema";

type Request<T extends EngineRequestType> = Extract<EngineRequest, { type: T }>;

/**
 * How long streamed tokens are merged into one "token" message (ms; the first goes at once).
 * A message per token costs a structured clone, a pipe write and a wake-up of the parent each;
 * measured with `npm run bench -- hops` (bench/hops.ts) on the tiny fixture model. 0 = one
 * message per token (MACARON_TOKEN_BATCH_MS=0, kept for that benchmark's "before" runs).
 */
export const TOKEN_BATCH_MS = 4;

export interface EngineRuntimeOptions {
  /** See TOKEN_BATCH_MS; default from MACARON_TOKEN_BATCH_MS, else TOKEN_BATCH_MS. */
  tokenBatchMs?: number;
}
/** The reply a request of type `T` resolves to (EngineReplies in the protocol). */
type Reply<T extends EngineRequestType> = Promise<EngineReply<T>>;

/**
 * The engine's request handling, independent of the channel it talks over (fork IPC or
 * Electron's parentPort), so that it can run and be tested in any process.
 */
export class EngineRuntime {
  private session: ModelSession | null = null;
  /**
   * The requests an abort may stop, by request id: generations (running or waiting for their
   * adapter group) and /v1 embeddings (see stoppable).
   */
  private readonly stoppables = new Map<number, { controller: AbortController; generation: boolean }>();
  /** Generations hold the model shared; a load, unload, forget or embedding waits for them all. */
  private readonly model = new SharedLock();
  private backend: Promise<LlamaBackend> | null = null;
  private disposed = false;
  private readonly tokenBatchMs: number;

  constructor(
    private readonly send: (message: EngineMessage) => void,
    private readonly loadBackend: () => Promise<LlamaBackend>,
    options: EngineRuntimeOptions = {},
  ) {
    this.tokenBatchMs =
      options.tokenBatchMs ?? batchWindowFromEnv(process.env.MACARON_TOKEN_BATCH_MS, TOKEN_BATCH_MS);
  }

  /** Start loading llama.cpp (~0.8 s) now, so the first model load does not wait for it. */
  warmUp(): void {
    this.getBackend().catch(() => {
      // Reported to the load request that needs it.
    });
  }

  /** Handle one raw message from the parent. Never throws: every request gets a reply. */
  async handle(raw: unknown): Promise<void> {
    const parsed = parseEngineRequest(raw);
    if (!parsed.ok) {
      this.send({ type: "error", id: parsed.id, code: "invalid_request", message: parsed.message });
      return;
    }
    const request = parsed.request;
    try {
      const value = await this.dispatch(request);
      this.send({ type: "result", id: request.id, value });
    } catch (error) {
      const code = error instanceof EngineFailure ? error.code : "internal";
      const message = error instanceof Error ? error.message : String(error);
      this.send({ type: "error", id: request.id, code, message });
    }
  }

  /** Abort any generation and free the model. */
  async dispose(): Promise<void> {
    this.disposed = true;
    for (const { controller } of this.stoppables.values()) controller.abort();
    await this.model.exclusive(async () => {
      await this.session?.dispose();
      this.session = null;
    });
  }

  /** Each case answers with its request type's reply (its handler's return type says which). */
  private dispatch(request: EngineRequest): Reply<EngineRequestType> {
    switch (request.type) {
      case "load":
        return this.load(request);
      case "unload":
        return this.unload();
      case "generate":
        return this.generate(request);
      case "abort":
        return Promise.resolve(this.abort(request));
      case "ping":
        return Promise.resolve({ pid: process.pid } satisfies EngineReply<"ping">);
      case "embed":
        return this.embed(request);
      case "forget":
        return this.forget(request);
      case "fit":
        return this.fit(request);
      case "info":
        return this.info();
      case "embedCounted":
        return this.embedCounted(request);
      case "countTokens":
        return Promise.resolve(this.countTokens(request));
      case "complete":
        return this.complete(request);
    }
  }

  private getBackend(): Promise<LlamaBackend> {
    this.backend ??= this.loadBackend();
    return this.backend;
  }

  private assertIdle(action: string): void {
    if (this.disposed) throw new EngineFailure("internal", "The engine is shutting down.");
    if ([...this.stoppables.values()].some((running) => running.generation)) {
      throw new EngineFailure("busy", `A generation is running; stop it before you ${action}.`);
    }
  }

  private async load(request: Request<"load">): Reply<"load"> {
    this.assertIdle("load a model");
    return this.model.exclusive(async () => {
      // Dispose first: two models in memory at once is what runs a machine out of RAM.
      await this.session?.dispose();
      this.session = null;
      let backend: LlamaBackend;
      try {
        backend = await this.getBackend();
      } catch (error) {
        throw new EngineFailure(
          "model_load_failed",
          `Could not start llama.cpp: ${(error as Error).message}`,
        );
      }
      try {
        const { id, path, ...rest } = request;
        this.session = await ModelSession.open(backend, path, withoutType(rest), (progress) =>
          this.send({ type: "progress", id, progress }),
        );
      } catch (error) {
        if (error instanceof ModelLoadError) throw new EngineFailure("model_load_failed", error.message);
        throw error;
      }
      return this.session.info;
    });
  }

  /**
   * A memory estimate (see estimateFit). Outside the model lock: it reads a GGUF header and
   * simulates allocations, so it can answer while a model loads or a generation runs.
   */
  private async fit(request: Request<"fit">): Reply<"fit"> {
    if (this.disposed) throw new EngineFailure("internal", "The engine is shutting down.");
    const backend = await this.backendOrFail();
    const fit = withoutType(request);
    try {
      return await estimateFit(backend.llama, backend.gpu, fit);
    } catch (error) {
      const where = "path" in fit.source ? fit.source.path : fit.source.url;
      throw new EngineFailure(
        "invalid_request",
        `Could not read the model file ${where}: ${(error as Error).message}`,
      );
    }
  }

  /** Which binaries llama.cpp was loaded from (node-llama-cpp's buildType). */
  private async info(): Reply<"info"> {
    const backend = await this.backendOrFail();
    const { repo, release } = backend.llama.llamaCppRelease;
    return { buildType: backend.llama.buildType, gpu: backend.gpu, llamaCpp: `${repo}@${release}` };
  }

  private async backendOrFail(): Promise<LlamaBackend> {
    try {
      return await this.getBackend();
    } catch (error) {
      throw new EngineFailure("internal", `Could not start llama.cpp: ${(error as Error).message}`);
    }
  }

  /** Under the model lock, so no generation re-saves the session while it is being dropped. */
  private async forget(request: Request<"forget">): Reply<"forget"> {
    return this.model.exclusive(async () => {
      await this.session?.forget(request.sessionKey);
      const deletedFiles = request.stateDir
        ? await deleteSavedStates(request.stateDir, request.sessionKey)
        : 0;
      return { deletedFiles };
    });
  }

  private async unload(): Reply<"unload"> {
    this.assertIdle("unload the model");
    return this.model.exclusive(async () => {
      await this.session?.dispose();
      this.session = null;
      return null;
    });
  }

  private generate(request: Request<"generate">): Reply<"generate"> {
    return this.generating(request.id, request.stream !== false, (session, onText, signal) =>
      session.generate(request.history, request.options, onText, signal),
    );
  }

  /** A raw completion: a generation like any other (busy, abort, streamed tokens). */
  private complete(request: Request<"complete">): Reply<"complete"> {
    return this.generating(request.id, request.stream !== false, (session, onText, signal) =>
      session.complete(request.prompt, request.options, onText, signal),
    );
  }

  /**
   * Run one generation (request `id`), abortable by an "abort" request naming `id`, its text
   * streamed as "token" messages (merged per `tokenBatchMs`) unless `stream` is false: then the
   * result alone carries the text. Several run at once: the session batches those under the
   * same adapter set and queues the others (ModelSession.generate).
   */
  private async generating(
    id: number,
    stream: boolean,
    run: (
      session: ModelSession,
      onText: (text: string) => void,
      signal: AbortSignal,
    ) => Promise<GenerateResult>,
  ): Promise<GenerateResult> {
    if (this.disposed) throw new EngineFailure("internal", "The engine is shutting down.");
    return this.stoppable(id, true, async (signal) => {
      const tokens = stream
        ? new DeltaBatcher((text) => this.send({ type: "token", id, text }), { windowMs: this.tokenBatchMs })
        : null;
      try {
        // Shared with other generations; a load in flight finishes before this one starts.
        return await this.model.shared(async () => {
          const session = this.session;
          if (!session) throw new EngineFailure("no_model", "No model is loaded. Load a model first.");
          try {
            return await run(session, (text) => tokens?.push(text), signal);
          } catch (error) {
            if (error instanceof AdapterError) throw new EngineFailure("adapter_failed", error.message);
            if (error instanceof ToolRequestError) throw new EngineFailure("invalid_request", error.message);
            throw error;
          }
        });
      } finally {
        // Every token before the result or error, which handle() sends once this returns.
        tokens?.flush();
      }
    });
  }

  /**
   * Run `work` as request `id`, stopped by an abort naming `id` (its signal) until it ends.
   * `generation`: a load or unload is refused while it runs (assertIdle).
   */
  private async stoppable<T>(
    id: number,
    generation: boolean,
    work: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    if (this.stoppables.has(id)) throw new EngineFailure("invalid_request", `Request ${id} is running.`);
    const controller = new AbortController();
    this.stoppables.set(id, { controller, generation });
    try {
      return await work(controller.signal);
    } finally {
      this.stoppables.delete(id);
    }
  }

  /**
   * Embeddings under the base model. Waits for a generation in progress (the model lock) rather
   * than answering "busy": the router embeds before it generates, so this is short.
   */
  private async embed(request: Request<"embed">): Reply<"embed"> {
    if (this.disposed) throw new EngineFailure("internal", "The engine is shutting down.");
    return this.model.exclusive(async () => {
      const session = this.session;
      if (!session) throw new EngineFailure("no_model", "No model is loaded. Load a model first.");
      return session.embed(request.texts);
    });
  }

  /**
   * embed with token counts (EmbedResult), in line with generations as embed is. An abort
   * naming it stops it between two decodes (a /v1 client that went away frees the model).
   */
  private async embedCounted(request: Request<"embedCounted">): Reply<"embedCounted"> {
    if (this.disposed) throw new EngineFailure("internal", "The engine is shutting down.");
    return this.stoppable(request.id, false, (signal) =>
      this.model.exclusive(async () => {
        const session = this.session;
        if (!session) throw new EngineFailure("no_model", "No model is loaded. Load a model first.");
        return session.embedCounted(request.texts, signal, request.truncate === true);
      }),
    );
  }

  /**
   * Token counts under the loaded model's tokenizer. Synchronous and without the model lock:
   * tokenizing reads only the vocabulary (a 100 kB text takes milliseconds), so a count never
   * waits for a generation.
   */
  private countTokens(request: Request<"countTokens">): EngineReply<"countTokens"> {
    if (this.disposed) throw new EngineFailure("internal", "The engine is shutting down.");
    const session = this.session;
    if (!session) throw new EngineFailure("no_model", "No model is loaded. Load a model first.");
    return request.texts.map((text) => session.model.tokenize(text, false).length);
  }

  private abort(request: Request<"abort">): EngineReply<"abort"> {
    const running = this.stoppables.get(request.target);
    if (!running) return { aborted: false };
    running.controller.abort();
    return { aborted: true };
  }
}

/** A request's own fields, without its envelope (`type`; `id` too when present). */
function withoutType<T extends { type: string; id?: number }>(request: T): Omit<T, "type" | "id"> {
  const copy: Partial<T> = { ...request };
  delete copy.type;
  delete copy.id;
  return copy as Omit<T, "type" | "id">;
}
