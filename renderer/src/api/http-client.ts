/**
 * Browser mode: the same API over the headless server. Calls are `POST /api/call/<method>`
 * (auth travels in an HttpOnly cookie set when the printed sign-in URL was opened); events come over
 * a reconnecting WebSocket at /api/events.
 */
import { ApiError } from "../../../electron/api";
import type { EventName, EventPayload, MethodInput, MethodName, MethodOutput } from "../../../electron/api";
import type { RendererApi } from "./connection";
import { unwrapResult } from "./envelope";
import { EventFanout } from "./event-fanout";
import { EventSocket } from "./event-socket";
import type { SocketLike } from "./event-socket";

export interface HttpClientOptions {
  /** Page origin, e.g. "http://127.0.0.1:8080". */
  origin: string;
  fetch?: typeof fetch;
  createSocket?: (url: string) => SocketLike;
}

// Bodies under this size may outlive the page (keepalive), e.g. a pending delete flushed on close.
const KEEPALIVE_LIMIT = 60_000;

/** ws: for http pages, wss: for https pages, same host. */
export function eventsUrl(origin: string): string {
  const url = new URL("/api/events", origin);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return url.toString();
}

export class HttpApiClient implements RendererApi {
  readonly platform = { kind: "browser" as const };
  readonly connection: EventSocket;
  private readonly fanout = new EventFanout();
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: HttpClientOptions) {
    // Bound: calling window.fetch with another `this` throws "Illegal invocation".
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    const createSocket =
      options.createSocket ?? ((url: string) => new WebSocket(url) as unknown as SocketLike);
    this.connection = new EventSocket({
      url: eventsUrl(options.origin),
      createSocket,
      onEvent: (event, payload) => this.fanout.dispatch(event, payload),
    });
  }

  /** POST the input; resolves with the value or rejects with the server's ApiError. */
  async call<M extends MethodName>(method: M, input: MethodInput<M>): Promise<MethodOutput<M>> {
    const body = JSON.stringify(input ?? {});
    let response: Response;
    try {
      response = await this.fetchImpl(
        new URL(`/api/call/${encodeURIComponent(method)}`, this.options.origin),
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
          credentials: "same-origin",
          keepalive: body.length < KEEPALIVE_LIMIT,
        },
      );
    } catch {
      throw new ApiError(
        "internal",
        "Cannot reach the Macaron server. Check that it is still running, then retry.",
      );
    }
    let raw: unknown;
    try {
      raw = await response.json();
    } catch {
      throw statusError(response.status);
    }
    // Non-200 answers carry the same envelope; only a body without one falls back to the status.
    try {
      return unwrapResult<MethodOutput<M>>(raw);
    } catch (error) {
      if (!response.ok && error instanceof ApiError && error.code === "internal" && !isEnvelope(raw)) {
        throw statusError(response.status);
      }
      throw error;
    }
  }

  /** Subscribe to an event; the WebSocket opens with the first subscription. */
  on<E extends EventName>(event: E, listener: (payload: EventPayload<E>) => void): () => void {
    const dispose = this.fanout.add(event, listener);
    this.connection.start();
    return dispose;
  }

  dispose(): void {
    this.connection.dispose();
    this.fanout.clear();
  }
}

function isEnvelope(raw: unknown): boolean {
  return typeof raw === "object" && raw !== null && "ok" in raw;
}

function statusError(status: number): ApiError {
  if (status === 401) {
    return new ApiError(
      "unauthorized",
      "Not signed in. Open the link the server printed when it started (its sign-in code works once, within 5 minutes; the server prints a new one on `kill -USR2 PID`).",
    );
  }
  if (status === 403) return new ApiError("forbidden", "The server refused this request.");
  return new ApiError(
    "internal",
    `The server did not answer like the Macaron API (HTTP ${status}). Check that this page is served by the Macaron server.`,
  );
}
