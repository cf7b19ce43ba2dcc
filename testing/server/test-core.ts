/**
 * A small in-memory Core for unit-testing the transports in isolation, over the one fake engine
 * (testing/engine/fake-engine.ts, as TRANSPORT_ENGINE). The real core is exercised by
 * electron/server/integration.test.ts.
 */
import {
  ApiError,
  isMethodName,
  methods,
  type AdapterInfo,
  type AdapterSelection,
  type EngineStatus,
  type EventName,
  type EventPayload,
  type Result,
} from "../../electron/api";
import type {
  CallContext,
  Core,
  CoreAdapters,
  EventListener,
  ResolvedSelection,
} from "../../electron/core/core-types";
import { GenerationService } from "../../electron/core/models/generation-service";
import { FakeEngine, TRANSPORT_ENGINE } from "../engine/fake-engine";

/** An installed adapter for FakeAdapters (enabled, fitting, version 1.0.0). */
export function fakeAdapter(id: string, domain = id): AdapterInfo {
  return {
    id,
    name: id,
    domain,
    version: "1.0.0",
    description: "",
    sha256: "0".repeat(64),
    sizeBytes: 100,
    enabled: true,
    scale: 1,
    defaultScale: 1,
    base: { architecture: "llama", embeddingLength: 64, baseName: null },
    fitsLoadedModel: true,
    incompatibleReason: null,
    usageCount: 0,
    installedAt: 1_700_000_000_000,
    lineage: { parent: null, trainedFrom: "test" },
  };
}

/**
 * Adapters for FakeCore: `installed` is the list; "auto" routes to `autoChoice` (an id) or the
 * base when it is null. Adapter files are `/adapters/<id>.gguf`.
 */
export class FakeAdapters implements CoreAdapters {
  installed: AdapterInfo[] = [];
  autoChoice: string | null = null;
  readonly resolved: Array<{ selection: AdapterSelection; text: string }> = [];

  listEnabled(): Promise<AdapterInfo[]> {
    return Promise.resolve(this.installed.filter((a) => a.enabled));
  }

  resolve(selection: AdapterSelection, text: string): Promise<ResolvedSelection> {
    this.resolved.push({ selection, text });
    const use = (
      mode: ResolvedSelection["routing"]["mode"],
      scales: [string, number][],
    ): ResolvedSelection => {
      for (const [id] of scales) {
        if (!this.installed.some((a) => a.id === id && a.enabled))
          throw new ApiError("invalid_input", `Adapter "${id}" is not installed.`);
      }
      return {
        routing: {
          mode,
          adapters: scales.map(([id, scale]) => ({ id, version: "1.0.0", scale })),
          confidence: 1,
          reason: `${mode} (fake)`,
          latencyMs: 0,
        },
        adapters: scales.map(([id, scale]) => ({ path: `/adapters/${id}.gguf`, scale })),
        kvPolicy: "reevaluate",
      };
    };
    try {
      if (selection === "base") return Promise.resolve(use("base", []));
      if (selection === "auto")
        return Promise.resolve(use("auto", this.autoChoice ? [[this.autoChoice, 1]] : []));
      if ("pinned" in selection) return Promise.resolve(use("pinned", [[selection.pinned, 1]]));
      return Promise.resolve(use("blend", Object.entries(selection.blend)));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }
}

/** Implements models.status and conversations.create; everything else is not_found. */
export class FakeCore implements Core {
  readonly engine = new FakeEngine(TRANSPORT_ENGINE);
  readonly generation = new GenerationService(() => this.engine);
  readonly adapters = new FakeAdapters();
  readonly started = Promise.resolve();
  readonly dispatched: Array<{ method: string; input: unknown; ctx: CallContext }> = [];
  private readonly listeners = new Set<EventListener>();
  private nextId = 1;

  dispatch(method: string, input: unknown, ctx: CallContext): Promise<Result<unknown>> {
    this.dispatched.push({ method, input, ctx });
    return Promise.resolve(this.run(method, input));
  }

  private run(method: string, input: unknown): Result<unknown> {
    if (!isMethodName(method)) return { ok: false, error: { code: "unknown_method", message: method } };
    const parsed = methods[method].input.safeParse(input);
    if (!parsed.success)
      return { ok: false, error: { code: "invalid_input", message: parsed.error.message } };
    switch (method) {
      case "models.status":
        return { ok: true, value: this.engineStatus() };
      case "conversations.create": {
        const now = Date.now();
        const title = (parsed.data as { title?: string }).title ?? "New chat";
        const conversation = {
          id: `c${this.nextId++}`,
          title,
          createdAt: now,
          updatedAt: now,
          adapters: "auto" as const,
        };
        this.emit("conversations.changed", { conversation, deletedId: null });
        return { ok: true, value: conversation };
      }
      case "models.open":
        return { ok: false, error: { code: "model_invalid", message: "Not a GGUF file" } };
      default:
        return { ok: false, error: { code: "not_found", message: `${method} is not in the fake` } };
    }
  }

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  emit<E extends EventName>(event: E, payload: EventPayload<E>): void {
    for (const listener of this.listeners) listener(event, payload);
  }

  engineStatus(): EngineStatus {
    return {
      state: this.engine.loaded ? "ready" : "idle",
      model: null,
      error: null,
      gpu: null,
      progress: null,
    };
  }

  async close(): Promise<void> {}
}

/** Builds the server around `core` and listens on 127.0.0.1 with a free port. */
export async function listenForTest(
  core: Core,
  options: { apiKey?: string; rendererDir?: string; corsOrigins?: string[] } = {},
): Promise<{ url: string; apiKey: string; close: () => Promise<void> }> {
  const { buildServer } = await import("../../electron/server/app");
  const apiKey = options.apiKey ?? "test-key-0123456789";
  const app = await buildServer({
    core,
    apiKey,
    rendererDir: options.rendererDir ?? "/nonexistent-renderer",
    host: "127.0.0.1",
    ...(options.corsOrigins ? { corsOrigins: options.corsOrigins } : {}),
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  return { url: `http://127.0.0.1:${address.port}`, apiKey, close: () => app.close() };
}

/** An app API reply as tests read it (either branch's fields, loosely typed). */
export interface EnvelopeReply<V = Record<string, unknown>> {
  ok: boolean;
  value: V;
  error: { code: string; message: string };
}

export interface OpenAiErrorReply {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** Tests assert on shapes; the type parameter only names what the test expects. */
export function readJson<T = EnvelopeReply>(res: Response): Promise<T> {
  return res.json() as Promise<T>;
}
