/**
 * The one scripted EngineClient of the tests (the real one is exercised by
 * core.integration.test.ts): core services and, through testing/server/test-core.ts, the
 * transports. Each generate() follows the next script: emit tokens, then finish, fail, or hang
 * until aborted. `FakeEngineOptions` make it behave as the transports' tests expect
 * (`TRANSPORT_ENGINE`).
 */
import { ApiError } from "../../electron/api";
import { EMBEDDING_MAX_TOKENS } from "../../common/engine-protocol";
import type {
  ChatTurn,
  EmbedResult,
  EngineClient,
  EngineLifecycleEvent,
  GenerateOptions,
  GenerateResult,
  LoadedModel,
  TokenLogprob,
  ToolCallOut,
} from "../../electron/core/engine/types";

export interface GenerateScript {
  tokens: string[];
  /** "finish" (default): resolve with eos; "hang": wait for the abort; an Error: reject. */
  end?: "finish" | "hang" | Error;
  /** After the tokens, end with these tool calls (stopReason "toolCalls"), as a model calling tools does. */
  toolCalls?: ToolCallOut[];
  /** When maxTokens cuts the tokens short: the tool call it cut off (GenerateResult.cutOffCall). */
  cutOffCall?: { name: string; arguments: string };
}

export interface GenerateCall {
  history: ChatTurn[];
  options: GenerateOptions;
  /** The caller's signal, when it passed one. */
  signal?: AbortSignal;
}

export interface FakeEngineOptions {
  /** The prompt's token count that generate() reports (default 10). */
  promptTokens?: number;
  /** generate() stops at options.maxTokens (stopReason "maxTokens"), as the real engine does; default false. */
  maxTokens?: boolean;
  /**
   * Grammar-constrained requests follow `scripts` and are recorded in `calls` like any other,
   * instead of `jsonAnswers` / `jsonCalls`; default false.
   */
  jsonFromScripts?: boolean;
  /** Generations may overlap (as the real engine's, which batches them); default false: "busy". */
  concurrentGenerations?: boolean;
}

/** As the transports' tests (testing/server/test-core.ts) expect: 7 prompt tokens, "Hel", "lo", "!". */
export const TRANSPORT_ENGINE: FakeEngineOptions & { tokens: string[] } = {
  promptTokens: 7,
  maxTokens: true,
  jsonFromScripts: true,
  tokens: ["Hel", "lo", "!"],
};

export interface CompleteCall {
  prompt: string;
  options: GenerateOptions;
}

/** The fake's tokenizer: one token per whitespace-separated word. */
export function fakeTokenCount(text: string): number {
  return text.split(/\s+/).filter((word) => word.length > 0).length;
}

export function loadedModel(path: string): LoadedModel {
  return { path, contextSize: 512, gpu: null, threads: 1, trainContextSize: 512 };
}

export class FakeEngine implements EngineClient {
  loaded: LoadedModel | null = null;
  readonly calls: GenerateCall[] = [];
  readonly scripts: GenerateScript[] = [];
  defaultScript: GenerateScript = { tokens: ["Hello", " world", "!"] };
  /**
   * Grammar-constrained requests (options.jsonSchema, e.g. memory proposals) are answered from
   * here instead of `scripts`, and recorded in `jsonCalls` instead of `calls`, so that they do
   * not disturb the chat scripts of a test.
   */
  readonly jsonAnswers: string[] = [];
  defaultJsonAnswer = '{"facts":[]}';
  readonly jsonCalls: GenerateCall[] = [];
  /** complete() calls (raw prompts); they follow `scripts` as generate() does. */
  readonly completeCalls: CompleteCall[] = [];
  /** Called synchronously when generate() starts (before any token). */
  onGenerate: ((call: GenerateCall) => void) | null = null;
  /** When set, load() rejects with it (after reporting some progress). */
  loadError: Error | null = null;
  /** When set, generate() and complete() reject with it (the call is still recorded). */
  failWith: Error | null = null;
  readonly loads: string[] = [];
  closed = false;
  private generating = false;
  private readonly listeners = new Set<(event: EngineLifecycleEvent) => void>();
  private readonly options: FakeEngineOptions;

  constructor(options: FakeEngineOptions & { tokens?: string[] } = {}) {
    const { tokens, ...rest } = options;
    this.options = rest;
    if (tokens) this.defaultScript = { tokens };
  }

  /** The default script's tokens (the answer when no script is queued). */
  get tokens(): string[] {
    return this.defaultScript.tokens;
  }
  set tokens(tokens: string[]) {
    this.defaultScript = { ...this.defaultScript, tokens };
  }

  /** Whether the default script hangs until aborted after its tokens. */
  get hang(): boolean {
    return this.defaultScript.end === "hang";
  }
  set hang(hang: boolean) {
    const { end: _end, ...rest } = this.defaultScript;
    this.defaultScript = hang ? { ...rest, end: "hang" } : rest;
  }

  async load(path: string, onProgress?: (p: number) => void): Promise<LoadedModel> {
    this.loads.push(path);
    onProgress?.(0.5);
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.loadError) {
      this.loaded = null;
      throw this.loadError;
    }
    onProgress?.(1);
    this.loaded = loadedModel(path);
    return this.loaded;
  }

  unloads = 0;
  async unload(): Promise<void> {
    await Promise.resolve();
    this.unloads += 1;
    this.loaded = null;
  }

  /** A deterministic bag-of-characters embedding: texts sharing letters are close. */
  async embed(texts: string[]): Promise<number[][]> {
    await Promise.resolve();
    return texts.map((text) => {
      const v = new Array<number>(32).fill(0);
      for (const ch of text.toLowerCase()) v[ch.charCodeAt(0) % 32]! += 1;
      const norm = Math.hypot(...v) || 1;
      return v.map((x) => x / norm);
    });
  }

  /** Token counts from fakeTokenCount, as the real engine's tokenizer gives them (a model must be loaded). */
  async countTokens(texts: string[]): Promise<number[]> {
    await Promise.resolve();
    if (!this.loaded) throw new ApiError("no_model", "No model is loaded. Load a model first.");
    return texts.map(fakeTokenCount);
  }

  /**
   * embed() with token counts from fakeTokenCount; like the real engine, an input over
   * EMBEDDING_MAX_TOKENS rejects with context_length_exceeded naming its index; an aborted
   * `signal` rejects with aborted.
   */
  async embedCounted(texts: string[], signal?: AbortSignal, truncate = false): Promise<EmbedResult> {
    if (signal?.aborted) throw new ApiError("aborted", "The embeddings were stopped by their caller.");
    const tokens = texts.map((text) =>
      truncate ? Math.min(EMBEDDING_MAX_TOKENS, fakeTokenCount(text)) : fakeTokenCount(text),
    );
    const over = tokens.findIndex((count) => count > EMBEDDING_MAX_TOKENS);
    if (over >= 0)
      throw new ApiError(
        "context_length_exceeded",
        `Input ${over} has ${tokens[over]} tokens; embeddings take at most ${EMBEDDING_MAX_TOKENS}.`,
      );
    const vectors = await this.embed(texts);
    return { vectors: vectors.map((v, i) => (tokens[i] === 0 ? v.map(() => 0) : v)), tokens };
  }

  async generate(
    history: ChatTurn[],
    options: GenerateOptions,
    onToken: (text: string) => void,
    signal?: AbortSignal,
  ): Promise<GenerateResult> {
    const call: GenerateCall = {
      history: structuredClone(history),
      options: { ...options },
      ...(signal ? { signal } : {}),
    };
    const json = (options.jsonSchema || options.json) && !this.options.jsonFromScripts;
    if (this.failWith) {
      (json ? this.jsonCalls : this.calls).push(call);
      throw this.failWith;
    }
    return this.oneAtATime(() => {
      let script: GenerateScript;
      if (json) {
        this.jsonCalls.push(call);
        script = { tokens: [this.jsonAnswers.shift() ?? this.defaultJsonAnswer] };
      } else {
        this.calls.push(call);
        this.onGenerate?.(call);
        script = this.scripts.shift() ?? this.defaultScript;
      }
      const bounds = { maxTokens: this.options.maxTokens ?? false, stop: false };
      return this.run(script, options, this.options.promptTokens ?? 10, bounds, onToken, signal);
    });
  }

  /**
   * A raw completion: records the call and follows the next script as generate() does; the
   * prompt counts fakeTokenCount tokens, and the first `options.stop` string met ends the text
   * (stopReason "stop"), as the real engine does.
   */
  async complete(
    prompt: string,
    options: GenerateOptions,
    onToken: (text: string) => void,
    signal?: AbortSignal,
  ): Promise<GenerateResult> {
    if (this.failWith) {
      this.completeCalls.push({ prompt, options: { ...options } });
      throw this.failWith;
    }
    return this.oneAtATime(() => {
      this.completeCalls.push({ prompt, options: { ...options } });
      const script = this.scripts.shift() ?? this.defaultScript;
      const bounds = { maxTokens: true, stop: true };
      return this.run(script, options, Math.max(1, fakeTokenCount(prompt)), bounds, onToken, signal);
    });
  }

  /** As the real engine says: generations may overlap (options.concurrentGenerations). */
  get concurrentGenerations(): boolean {
    return this.options.concurrentGenerations === true;
  }

  /** One generation at a time, unless options.concurrentGenerations. */
  private async oneAtATime(work: () => Promise<GenerateResult>): Promise<GenerateResult> {
    if (this.concurrentGenerations) return work();
    if (this.generating)
      throw new ApiError("busy", "A generation is running; stop it before you start another one.");
    this.generating = true;
    try {
      return await work();
    } finally {
      this.generating = false;
    }
  }

  private async run(
    script: GenerateScript,
    options: GenerateOptions,
    promptTokens: number,
    /** Cut at `options.maxTokens` and at `options.stop` (complete; generate's scripts say it all). */
    bounds: { maxTokens: boolean; stop: boolean },
    onToken: (text: string) => void,
    signal?: AbortSignal,
  ): Promise<GenerateResult> {
    const started = Date.now();
    let text = "";
    let tokens = 0;
    let stopped = false;
    const emitted: string[] = [];
    for (const token of script.tokens) {
      if (signal?.aborted) break;
      if (bounds.maxTokens && tokens >= options.maxTokens) break;
      await new Promise<void>((resolve) => setImmediate(resolve));
      const stop = bounds.stop ? firstStop(text + token, options.stop, text.length) : null;
      const piece = stop === null ? token : (text + token).slice(text.length, stop);
      if (piece) onToken(piece);
      text += piece;
      tokens++;
      emitted.push(piece);
      if (stop !== null) {
        stopped = true;
        break;
      }
    }
    const cut = !stopped && !signal?.aborted && tokens < script.tokens.length;
    if (script.end === "hang" && !signal?.aborted) {
      await new Promise<void>((resolve) =>
        signal?.addEventListener("abort", () => resolve(), { once: true }),
      );
    }
    if (script.end instanceof Error && !signal?.aborted) throw script.end;
    const calls = !signal?.aborted && !stopped && !cut && script.toolCalls?.length ? script.toolCalls : null;
    return {
      text,
      stopReason: signal?.aborted
        ? "abort"
        : stopped
          ? "stop"
          : cut
            ? "maxTokens"
            : calls
              ? "toolCalls"
              : "eos",
      ...(calls ? { toolCalls: structuredClone(calls) } : {}),
      ...(cut && script.cutOffCall ? { cutOffCall: { ...script.cutOffCall } } : {}),
      ...(options.logprobs ? { logprobs: fakeLogprobs(emitted, options.logprobs.top) } : {}),
      tokens,
      ttftMs: tokens > 0 ? 1 : null,
      durationMs: Math.max(1, Date.now() - started),
      promptTokensEvaluated: promptTokens,
      promptTokens,
      contextTokens: promptTokens + tokens,
      contextSize: 512,
    };
  }

  onLifecycle(listener: (event: EngineLifecycleEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Simulate the supervisor reporting a lifecycle event. */
  emitLifecycle(event: EngineLifecycleEvent): void {
    for (const l of this.listeners) l(event);
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

/**
 * Where the first stop string at or after `from` (the latest token) starts in `text`, or null.
 * Simpler than the real engine, which also finds a stop string spanning tokens: the fake never
 * takes back text it has streamed.
 */
function firstStop(text: string, stop: string[] | undefined, from: number): number | null {
  let best: number | null = null;
  for (const s of stop ?? []) {
    const at = text.indexOf(s, from);
    if (at >= 0 && (best === null || at < best)) best = at;
  }
  return best;
}

/**
 * Deterministic logprobs for the fake: the chosen token is the most likely one (-0.1), followed
 * by `top - 1` made-up alternatives, each less likely than the one before.
 */
function fakeLogprobs(tokens: string[], top: number): TokenLogprob[] {
  const entry = (token: string, logprob: number) => ({
    token,
    logprob,
    bytes: [...Buffer.from(token)],
  });
  return tokens.map((token) => ({
    ...entry(token, -0.1),
    top: Array.from({ length: top }, (_, i) => (i === 0 ? entry(token, -0.1) : entry(`alt${i}`, -1 - i))),
  }));
}

export const crashed = (): ApiError =>
  new ApiError("engine_crashed", "The engine stopped unexpectedly while answering. It is being restarted.");
