/**
 * A scripted EngineClient for unit tests of core services (the real one is exercised by
 * core.integration.test.ts). Each generate() follows the next script: emit tokens, then
 * finish, fail, or hang until aborted.
 */
import { ApiError } from "../../api";
import type {
  ChatTurn,
  EngineClient,
  EngineLifecycleEvent,
  GenerateOptions,
  GenerateResult,
  LoadedModel,
  ToolCallOut,
} from "../engine/types";

export interface GenerateScript {
  tokens: string[];
  /** "finish" (default): resolve with eos; "hang": wait for the abort; an Error: reject. */
  end?: "finish" | "hang" | Error;
  /** After the tokens, end with these tool calls (stopReason "toolCalls"), as a model calling tools does. */
  toolCalls?: ToolCallOut[];
}

export interface GenerateCall {
  history: ChatTurn[];
  options: GenerateOptions;
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
  /** Called synchronously when generate() starts (before any token). */
  onGenerate: ((call: GenerateCall) => void) | null = null;
  /** When set, load() rejects with it (after reporting some progress). */
  loadError: Error | null = null;
  readonly loads: string[] = [];
  closed = false;
  private generating = false;
  private readonly listeners = new Set<(event: EngineLifecycleEvent) => void>();

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

  async generate(
    history: ChatTurn[],
    options: GenerateOptions,
    onToken: (text: string) => void,
    signal?: AbortSignal,
  ): Promise<GenerateResult> {
    // Like the real engine: one generation at a time.
    if (this.generating)
      throw new ApiError("busy", "A generation is running; stop it before you start another one.");
    this.generating = true;
    try {
      return await this.run(history, options, onToken, signal);
    } finally {
      this.generating = false;
    }
  }

  private async run(
    history: ChatTurn[],
    options: GenerateOptions,
    onToken: (text: string) => void,
    signal?: AbortSignal,
  ): Promise<GenerateResult> {
    const call = { history: structuredClone(history), options: { ...options } };
    let script: GenerateScript;
    if (options.jsonSchema) {
      this.jsonCalls.push(call);
      script = { tokens: [this.jsonAnswers.shift() ?? this.defaultJsonAnswer] };
    } else {
      this.calls.push(call);
      this.onGenerate?.(call);
      script = this.scripts.shift() ?? this.defaultScript;
    }
    const started = Date.now();
    let text = "";
    let tokens = 0;
    for (const token of script.tokens) {
      if (signal?.aborted) break;
      await new Promise<void>((resolve) => setImmediate(resolve));
      onToken(token);
      text += token;
      tokens++;
    }
    if (script.end === "hang" && !signal?.aborted) {
      await new Promise<void>((resolve) =>
        signal?.addEventListener("abort", () => resolve(), { once: true }),
      );
    }
    if (script.end instanceof Error && !signal?.aborted) throw script.end;
    const calls = !signal?.aborted && script.toolCalls?.length ? script.toolCalls : null;
    return {
      text,
      stopReason: signal?.aborted ? "abort" : calls ? "toolCalls" : "eos",
      ...(calls ? { toolCalls: structuredClone(calls) } : {}),
      tokens,
      ttftMs: tokens > 0 ? 1 : null,
      durationMs: Math.max(1, Date.now() - started),
      promptTokensEvaluated: 10,
      contextTokens: 10 + tokens,
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

export const crashed = (): ApiError =>
  new ApiError("engine_crashed", "The engine stopped unexpectedly while answering. It is being restarted.");
