/**
 * Stateless generation for the local API (/v1): the OpenAI- and Anthropic-shaped endpoints
 * call this instead of the engine. Requests run in arrival order, as many at once as the
 * engine takes (generation-queue.ts: one, or the loaded context's sequences when the engine
 * batches; a client beyond that waits, one that left while waiting never runs, too many waiting
 * is "busy"), then through core's engine queue (engine-queue.ts), where they take their turn
 * with chat answers (the engine serves a waiting chat turn first) and preempt background work.
 */
import { ApiError } from "../../api/errors";
import type {
  ChatTurn,
  EmbedResult,
  EngineClient,
  GenerateOptions,
  GenerateResult,
  LoadedModel,
} from "../engine/types";
import { NO_TOKENS } from "../engine/supervisor";
import { GenerationQueue } from "./generation-queue";

/** What the /v1 endpoints may ask of the engine (Core.generation). */
export interface CoreGeneration {
  /** The loaded model, or null. */
  readonly loaded: LoadedModel | null;
  /** Whether the engine can continue raw prompts (complete). */
  readonly canComplete: boolean;
  /** Whether the engine can embed with token counts (embed). */
  readonly canEmbed: boolean;
  /**
   * A chat generation; rejects with ApiError("aborted") if `signal` fired while it waited.
   * Without `onToken` nothing is streamed: the engine sends the result alone (its text whole).
   */
  generate(
    history: ChatTurn[],
    options: GenerateOptions,
    onToken: ((text: string) => void) | undefined,
    signal: AbortSignal,
  ): Promise<GenerateResult>;
  /** A raw prompt continued; rejects as generate does, and when the engine cannot (canComplete). */
  complete(
    prompt: string,
    options: GenerateOptions,
    onToken: ((text: string) => void) | undefined,
    signal: AbortSignal,
  ): Promise<GenerateResult>;
  /** Embeddings with each text's token count; rejects as generate does, and when the engine cannot. */
  /** `truncate`: cut a long input to what the engine takes instead of refusing it. */
  embed(texts: string[], signal: AbortSignal, truncate?: boolean): Promise<EmbedResult>;
}

/** CoreGeneration over the engine `engine()` returns at each call (core's engine queue). */
export class GenerationService implements CoreGeneration {
  private readonly queue: GenerationQueue;

  constructor(
    private readonly engine: () => EngineClient,
    maxWaiting?: number,
  ) {
    this.queue = new GenerationQueue(maxWaiting);
  }

  get loaded(): LoadedModel | null {
    return this.engine().loaded;
  }

  get canComplete(): boolean {
    return this.engine().complete !== undefined;
  }

  get canEmbed(): boolean {
    return this.engine().embedCounted !== undefined;
  }

  generate(
    history: ChatTurn[],
    options: GenerateOptions,
    onToken: ((text: string) => void) | undefined,
    signal: AbortSignal,
  ): Promise<GenerateResult> {
    return this.queue.run(
      signal,
      () => this.engine().generate(history, options, onToken ?? NO_TOKENS, signal),
      this.concurrency(),
    );
  }

  complete(
    prompt: string,
    options: GenerateOptions,
    onToken: ((text: string) => void) | undefined,
    signal: AbortSignal,
  ): Promise<GenerateResult> {
    return this.queue.run(
      signal,
      () => {
        const engine = this.engine();
        if (!engine.complete) throw new ApiError("internal", "This engine cannot complete raw prompts.");
        return engine.complete(prompt, options, onToken ?? NO_TOKENS, signal);
      },
      this.concurrency(),
    );
  }

  /** How many generations the engine takes at once: its context's sequences when it batches. */
  private concurrency(): number {
    const engine = this.engine();
    if (engine.concurrentGenerations !== true) return 1;
    return Math.max(1, engine.loaded?.settings?.sequences ?? 1);
  }

  embed(texts: string[], signal: AbortSignal, truncate?: boolean): Promise<EmbedResult> {
    return this.queue.run(signal, () => {
      const engine = this.engine();
      if (!engine.embedCounted) throw new ApiError("internal", "This engine cannot count embedding tokens.");
      // A client that goes away stops the engine's work too: the model is free for the next.
      return engine.embedCounted(texts, signal, truncate);
    });
  }
}
