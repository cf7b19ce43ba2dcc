/**
 * The HTTP calls of the feedback sync, each turned into an outcome the sync loop can act on.
 * Never throws for HTTP or network trouble (only when the caller's own signal aborts).
 */
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import {
  BatchResponse,
  DeleteResponse,
  PROTOCOL_VERSION,
  RegisterResponse,
  type BatchRequest,
  type FeedbackItem,
} from "../../../../common/feedback-protocol";
import { parseRetryAfter } from "./backoff";

const gzipAsync = promisify(gzip);

export type Outcome<T> =
  | { kind: "ok"; value: T }
  /** 400/413: the server will never take this request as it is. */
  | { kind: "refused"; status: number; reason: string }
  /** 401/403: the token is unknown, rotated or of another install. */
  | { kind: "unauthorized"; status: number; reason: string }
  /**
   * 409 on register: the install id is registered and the request did not carry its current
   * token. Only the holder of that token may rotate it (so nobody takes an install over by id).
   */
  | { kind: "taken"; status: number; reason: string }
  /** 429/5xx/unexpected answers: try later (after retryAfterMs when the server said). */
  | { kind: "retry"; status: number; retryAfterMs: number | null; reason: string }
  /** No answer: refused connection, reset, timeout. `offline` when nothing listens/resolves. */
  | { kind: "network"; offline: boolean; reason: string };

export interface EndpointDeps {
  endpoint: string;
  fetch: typeof fetch;
  now: () => number;
  requestTimeoutMs: number;
}

/**
 * A stable batch id derived from the item keys: a retried batch (same items) carries the same
 * id, so the server's logs show a retry as a retry.
 */
export function batchIdFor(keys: string[]): string {
  return "b-" + createHash("sha256").update(keys.join("\n")).digest("hex").slice(0, 32);
}

/** The gzip body of a batch (built off the main thread's hot path by zlib's thread pool). */
export async function encodeBatch(installId: string, items: FeedbackItem[]): Promise<Buffer> {
  const request: BatchRequest = {
    protocol: PROTOCOL_VERSION,
    installId,
    batchId: batchIdFor(items.map((i) => i.idempotencyKey)),
    items,
  };
  return gzipAsync(Buffer.from(JSON.stringify(request)));
}

/** The cloud feedback endpoint, as typed calls. */
export class FeedbackEndpoint {
  constructor(private readonly deps: EndpointDeps) {}

  /**
   * Registers `installId` with the token the app chose (`token`, random): registering again
   * with the same token is idempotent (a retry after a lost answer), while a registered id
   * with another token answers "taken".
   */
  register(installId: string, signal: AbortSignal, token: string): Promise<Outcome<{ token: string }>> {
    return this.call("POST", "/v1/installs", signal, {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ installId, token }),
      parse: (json) => ({ token: RegisterResponse.parse(json).token }),
    });
  }

  postBatch(token: string, gzipBody: Buffer, signal: AbortSignal): Promise<Outcome<BatchResponse>> {
    return this.call("POST", "/v1/feedback/batches", signal, {
      headers: {
        "content-type": "application/json",
        "content-encoding": "gzip",
        authorization: `Bearer ${token}`,
      },
      body: gzipBody,
      parse: (json) => BatchResponse.parse(json),
    });
  }

  deleteData(token: string, installId: string, signal: AbortSignal): Promise<Outcome<number>> {
    return this.call("DELETE", `/v1/installs/${encodeURIComponent(installId)}/data`, signal, {
      headers: { authorization: `Bearer ${token}` },
      parse: (json) => DeleteResponse.parse(json).deletedItems,
    });
  }

  private async call<T>(
    method: string,
    path: string,
    signal: AbortSignal,
    req: { headers: Record<string, string>; body?: string | Buffer; parse: (json: unknown) => T },
  ): Promise<Outcome<T>> {
    // The per-request timeout keeps a stalled server from hanging the loop; `signal` is stop().
    const timeout = AbortSignal.timeout(this.deps.requestTimeoutMs);
    const url = new URL(
      path,
      this.deps.endpoint.endsWith("/") ? this.deps.endpoint : this.deps.endpoint + "/",
    );
    let res: Response;
    let text: string;
    try {
      res = await this.deps.fetch(url, {
        method,
        headers: req.headers,
        body: req.body,
        signal: AbortSignal.any([signal, timeout]),
      });
      text = await res.text();
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      return networkOutcome(err, timeout.aborted, this.deps.requestTimeoutMs);
    }
    const reason = errorReason(text, res.status);
    if (res.ok) {
      try {
        return { kind: "ok", value: req.parse(JSON.parse(text)) };
      } catch {
        // A 200 we cannot read says nothing about what was stored: retry, dedupe sorts it out.
        return { kind: "retry", status: res.status, retryAfterMs: null, reason: "unreadable server answer" };
      }
    }
    if (res.status === 400 || res.status === 413) return { kind: "refused", status: res.status, reason };
    if (res.status === 401 || res.status === 403) return { kind: "unauthorized", status: res.status, reason };
    if (res.status === 409 && path === "/v1/installs") return { kind: "taken", status: res.status, reason };
    const retryAfterMs =
      res.status === 429 || res.status === 503
        ? parseRetryAfter(res.headers.get("retry-after"), this.deps.now())
        : null;
    return { kind: "retry", status: res.status, retryAfterMs, reason };
  }
}

function errorReason(text: string, status: number): string {
  try {
    const json = JSON.parse(text) as { error?: unknown };
    if (typeof json.error === "string") return `HTTP ${status}: ${json.error}`;
  } catch {
    // not JSON: fall through
  }
  return `HTTP ${status}`;
}

const OFFLINE_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "ENETDOWN",
]);

function networkOutcome(err: unknown, timedOut: boolean, timeoutMs: number): Outcome<never> {
  if (timedOut) return { kind: "network", offline: false, reason: `no answer within ${timeoutMs} ms` };
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code ?? (err as { code?: string }).code;
  const message = cause?.message ?? (err as Error).message;
  return {
    kind: "network",
    offline: code !== undefined && OFFLINE_CODES.has(code),
    reason: code ? `${code}: ${message}` : message,
  };
}
