import { ApiError } from "../../api/errors";
import { NO_TOKENS } from "../engine/supervisor";
import type {
  ChatTurn,
  EmbedResult,
  EngineClient,
  EngineInfo,
  EngineLifecycleEvent,
  FitOptions,
  FitResult,
  FitSource,
  GenerateOptions,
  GenerateResult,
  LoadedModel,
  LoadOptions,
} from "../engine/types";

/** A background generation waiting for, or holding, the engine. */
interface BackgroundTask {
  history: ChatTurn[];
  options: GenerateOptions;
  signal: AbortSignal;
  resolve: (result: GenerateResult) => void;
  reject: (err: Error) => void;
  /** Aborts the engine call when other work arrives (the task then waits again). */
  controller: AbortController | null;
  preempted: boolean;
}

/** A piece of work in line: a generation, or anything else (load, embed, forget…). */
interface Work {
  generation: boolean;
  run: () => Promise<void>;
}

/**
 * Puts engine work in one line. An engine that runs one generation at a time answers "busy" to
 * a second one, so without this two conversations (or a chat and an /v1 request) answering at
 * once would fail; here the second waits its turn, and a load waits for the answer before it.
 * An engine with `concurrentGenerations` (the real one) takes generations while others run, so
 * consecutive generations in line all go to it at once (it batches those under one adapter set
 * and queues the rest, the app's chat first); other work still waits for them to end, and
 * generations behind it wait for it. Aborting a generation that is still waiting ends it at
 * once without touching the engine.
 *
 * Background generations (memory proposals) run only when nothing else waits, and give the
 * engine up when other work arrives: they are aborted and run again from the start later, so a
 * user never waits for them.
 */
export class EngineQueue implements EngineClient {
  private readonly line: Work[] = [];
  private readonly background: BackgroundTask[] = [];
  /** Work other than concurrent generations runs (background included): nothing else starts. */
  private exclusive = false;
  /** Concurrent generations running in the engine. */
  private generations = 0;
  private runningBackground: BackgroundTask | null = null;

  constructor(private readonly inner: EngineClient) {
    const fit = inner.fit?.bind(inner);
    this.fit = fit
      ? (source: FitSource, options?: FitOptions): Promise<FitResult> => fit(source, options)
      : undefined;
    // Not in line: the engine counts without the model lock, so a count never waits for an answer.
    const count = inner.countTokens?.bind(inner);
    this.countTokens = count ? (texts: string[]): Promise<number[]> => count(texts) : undefined;
  }

  get loaded(): LoadedModel | null {
    return this.inner.loaded;
  }

  /** As the engine behind it: generations then go to it together. */
  get concurrentGenerations(): boolean {
    return this.inner.concurrentGenerations === true;
  }

  /** Load a model once the work queued before it has finished. */
  load(path: string, onProgress?: (p: number) => void, options?: LoadOptions): Promise<LoadedModel> {
    return this.enqueue(false, () => this.inner.load(path, onProgress, options));
  }

  /** Free the model once the work queued before it has finished (a running answer completes first). */
  async unload(): Promise<void> {
    const inner = this.inner;
    if (!inner.unload) throw new ApiError("internal", "This engine cannot unload its model.");
    await this.enqueue(false, () => inner.unload!());
  }

  /**
   * A memory estimate, out of line: it loads nothing and the engine answers it while it
   * generates. Absent when the engine cannot estimate (as on EngineClient).
   */
  readonly fit: EngineClient["fit"];
  readonly countTokens?: (texts: string[]) => Promise<number[]>;

  info(): Promise<EngineInfo> {
    const inner = this.inner;
    if (!inner.info)
      return Promise.reject(new ApiError("internal", "This engine does not report its build."));
    return inner.info();
  }

  /** In line: a running answer finishes before the process is replaced. */
  async relaunch(): Promise<void> {
    const inner = this.inner;
    if (!inner.relaunch) throw new ApiError("internal", "This engine cannot be restarted.");
    await this.enqueue(false, () => inner.relaunch!());
  }

  /** Generate once the work queued before it has finished; see EngineClient.generate. */
  generate(
    history: ChatTurn[],
    options: GenerateOptions,
    onToken: (text: string) => void,
    signal?: AbortSignal,
  ): Promise<GenerateResult> {
    return this.inLine(() => this.inner.generate(history, options, onToken, signal), signal);
  }

  /**
   * Continue a raw prompt once the work queued before it has finished, like generate (aborting
   * while it waits ends it at once). Rejects when the engine cannot complete raw prompts.
   */
  complete(
    prompt: string,
    options: GenerateOptions,
    onToken: (text: string) => void,
    signal?: AbortSignal,
  ): Promise<GenerateResult> {
    const inner = this.inner;
    if (!inner.complete)
      return Promise.reject(new ApiError("internal", "This engine cannot complete raw prompts."));
    return this.inLine(() => inner.complete!(prompt, options, onToken, signal), signal);
  }

  /** A generation in line: aborting `signal` before it starts resolves it as "abort" at once. */
  private inLine(run: () => Promise<GenerateResult>, signal?: AbortSignal): Promise<GenerateResult> {
    if (signal?.aborted) return Promise.resolve(this.notStarted());
    return new Promise<GenerateResult>((resolve, reject) => {
      const onAbort = (): void => resolve(this.notStarted());
      signal?.addEventListener("abort", onAbort, { once: true });
      void this.enqueue(true, async () => {
        signal?.removeEventListener("abort", onAbort);
        if (signal?.aborted) return; // already answered by onAbort
        try {
          resolve(await run());
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
    });
  }

  /**
   * Generate (without streaming) at the lowest priority: when no other work waits. Other work
   * arriving meanwhile preempts it; it then starts over once the line is empty again. Aborting
   * `signal` ends it with stopReason "abort".
   */
  generateInBackground(
    history: ChatTurn[],
    options: GenerateOptions,
    signal: AbortSignal,
  ): Promise<GenerateResult> {
    if (signal.aborted) return Promise.resolve(this.notStarted());
    return new Promise<GenerateResult>((resolve, reject) => {
      const task: BackgroundTask = {
        history,
        options,
        signal,
        resolve,
        reject,
        controller: null,
        preempted: false,
      };
      signal.addEventListener(
        "abort",
        () => {
          const waiting = this.background.indexOf(task);
          if (waiting >= 0) {
            this.background.splice(waiting, 1);
            resolve(this.notStarted());
          }
          task.controller?.abort();
        },
        { once: true },
      );
      this.background.push(task);
      this.pump();
    });
  }

  /** In line with the rest: a running answer finishes (or is stopped) before the cache goes. */
  async forget(sessionKey: string, stateDir?: string): Promise<void> {
    const inner = this.inner;
    if (!inner.forget) return;
    await this.enqueue(false, () => inner.forget!(sessionKey, stateDir));
  }

  /** Embeddings run in line too: the engine evaluates one thing at a time. */
  embed(texts: string[]): Promise<number[][]> {
    return this.enqueue(false, () => this.inner.embed(texts));
  }

  /** In line, as embed; rejects when the engine cannot count tokens. */
  embedCounted(texts: string[], signal?: AbortSignal, truncate?: boolean): Promise<EmbedResult> {
    const inner = this.inner;
    if (!inner.embedCounted)
      return Promise.reject(new ApiError("internal", "This engine cannot count embedding tokens."));
    return this.enqueue(false, () => inner.embedCounted!(texts, signal, truncate));
  }

  onLifecycle(listener: (event: EngineLifecycleEvent) => void): () => void {
    return this.inner.onLifecycle(listener);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private enqueue<T>(generation: boolean, task: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.line.push({ generation, run: () => task().then(resolve, reject) });
      const running = this.runningBackground;
      if (running && !running.preempted) {
        running.preempted = true;
        running.controller?.abort();
      }
      this.pump();
    });
  }

  /**
   * Start what may start now: from the head of the line, every generation while the engine
   * takes them together, else one piece of work once nothing runs; background work only when
   * the line is empty and nothing runs.
   */
  private pump(): void {
    const together = this.inner.concurrentGenerations === true;
    while (!this.exclusive) {
      const next = this.line[0];
      if (next?.generation && together) {
        this.line.shift();
        this.generations++;
        this.start(next.run, () => this.generations--);
        continue;
      }
      if (this.generations > 0) return;
      this.line.shift();
      const task = next ? null : this.background.shift();
      if (!next && !task) return;
      this.exclusive = true;
      if (task) {
        // Set now, not when it starts: work arriving in between must preempt it too.
        task.preempted = false;
        this.runningBackground = task;
      }
      this.start(next ? next.run : () => this.runBackground(task!), () => (this.exclusive = false));
      return;
    }
  }

  /** Run `work` in a later microtask (callers finish their turn first), then `done` and pump. */
  private start(work: () => Promise<void>, done: () => void): void {
    void Promise.resolve()
      .then(work)
      .catch(() => undefined)
      .finally(() => {
        done();
        this.pump();
      });
  }

  private async runBackground(task: BackgroundTask): Promise<void> {
    try {
      if (task.signal.aborted) {
        task.resolve(this.notStarted());
        return;
      }
      if (task.preempted) {
        this.background.unshift(task);
        return;
      }
      task.controller = new AbortController();
      const result = await this.inner.generate(
        task.history,
        task.options,
        // Background work wants the whole text only: the engine streams nothing.
        NO_TOKENS,
        task.controller.signal,
      );
      if (task.preempted && !task.signal.aborted) this.background.unshift(task);
      else task.resolve(result);
    } catch (err) {
      if (task.preempted && !task.signal.aborted) this.background.unshift(task);
      else task.reject(err instanceof Error ? err : new Error(String(err)));
    } finally {
      this.runningBackground = null;
      task.controller = null;
    }
  }

  private notStarted(): GenerateResult {
    const contextSize = this.inner.loaded?.contextSize ?? 0;
    return {
      text: "",
      stopReason: "abort",
      tokens: 0,
      ttftMs: null,
      durationMs: 0,
      promptTokensEvaluated: 0,
      contextTokens: 0,
      contextSize,
    };
  }
}
