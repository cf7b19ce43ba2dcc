import type {
  ChatTurn,
  EngineClient,
  EngineLifecycleEvent,
  GenerateOptions,
  GenerateResult,
  LoadedModel,
} from "../engine/types";

/**
 * Puts engine work in one line. The engine runs one generation at a time and answers "busy"
 * to a second one, so without this two conversations (or a chat and an /v1 request) answering
 * at once would fail; here the second waits its turn, and a load waits for the answer before
 * it. Aborting a generation that is still waiting ends it at once without touching the engine.
 */
export class EngineQueue implements EngineClient {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly inner: EngineClient) {}

  get loaded(): LoadedModel | null {
    return this.inner.loaded;
  }

  /** Load a model once the work queued before it has finished. */
  load(path: string, onProgress?: (p: number) => void): Promise<LoadedModel> {
    return this.enqueue(() => this.inner.load(path, onProgress));
  }

  /** Generate once the work queued before it has finished; see EngineClient.generate. */
  generate(
    history: ChatTurn[],
    options: GenerateOptions,
    onToken: (text: string) => void,
    signal?: AbortSignal,
  ): Promise<GenerateResult> {
    if (signal?.aborted) return Promise.resolve(this.notStarted());
    return new Promise<GenerateResult>((resolve, reject) => {
      const onAbort = (): void => resolve(this.notStarted());
      signal?.addEventListener("abort", onAbort, { once: true });
      void this.enqueue(async () => {
        signal?.removeEventListener("abort", onAbort);
        if (signal?.aborted) return; // already answered by onAbort
        try {
          resolve(await this.inner.generate(history, options, onToken, signal));
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
    });
  }

  /** Embeddings run in line too: the engine evaluates one thing at a time. */
  embed(texts: string[]): Promise<number[][]> {
    return this.enqueue(() => this.inner.embed(texts));
  }

  onLifecycle(listener: (event: EngineLifecycleEvent) => void): () => void {
    return this.inner.onLifecycle(listener);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.tail.then(task, task);
    this.tail = run.catch(() => undefined);
    return run;
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
