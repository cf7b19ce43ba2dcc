import type { EngineStatus, EventName, EventPayload, Result } from "../api";
import type { EngineClient, SpawnEngine } from "./engine/types";

export type EventListener = <E extends EventName>(event: E, payload: EventPayload<E>) => void;

/** Who is calling: transports pass it so that handlers and logs know the origin. */
export interface CallContext {
  transport: "ipc" | "http";
}

/**
 * The services behind the API, identical inside Electron's main process and the headless
 * server. Transports only validate the envelope, call `dispatch` and forward events.
 */
export interface Core {
  /** Validate `input` against the method's schema, run it, return the result envelope. Never throws. */
  dispatch(method: string, input: unknown, ctx: CallContext): Promise<Result<unknown>>;
  /** Every event core emits; returns a disposer. */
  subscribe(listener: EventListener): () => void;
  /** The engine, for the OpenAI-compatible endpoints (stateless generation). */
  readonly engine: EngineClient;
  engineStatus(): EngineStatus;
  close(): Promise<void>;
}

export interface CoreOptions {
  /** Holds macaron.db, the generated demo model and later adapters. */
  dataDir: string;
  spawnEngine: SpawnEngine;
  /** Load this model at start-up (headless `--model`). */
  initialModel?: string;
  /** Defaults for generation when a call gives none. */
  defaultMaxTokens?: number;
}
