/**
 * The Streamable HTTP transport for MCP servers: the SDK's StreamableHTTPClientTransport (same
 * protocol, sessions, SSE reconnection) given a `fetch` that bounds what a server can make the
 * app do, as stdio-transport.ts does for a process (the same limits, from message-bounds.ts):
 * - a JSON answer, or one SSE event, over MAX_MESSAGE_BYTES is refused as it streams (the body
 *   is cancelled past the limit, never held whole) and the request it answers fails with that
 *   sentence; the server stays usable. A standalone (GET) stream that sends one is not opened
 *   again (its reconnections would download it again and again);
 * - every message is parsed and cut down before the SDK sees it (message-bounds.ts: in the
 *   worker from 256 KB, tool results to TOOL_RESULT_MAX_CHARS); the SDK then gets the cut
 *   message as JSON text and parses that again on this thread: small, so bounded;
 * - notifications past the rate are dropped (the same count, reported once a second);
 * - a POST's event stream is closed once every request it carried is answered (the server
 *   should close it then: one that streams on is not read for ever);
 * - an error status's body (read whole by the SDK for its message) is cut to ERROR_BODY_BYTES.
 * The bounds are here, in the fetch, because the SDK reads and parses bodies itself
 * (`response.json()`, `JSON.parse(event.data)`), on this thread and without a limit.
 */
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { TOOL_RESULT_MAX_CHARS } from "../../../api/tools";
import {
  MAX_MESSAGE_BYTES,
  MAX_STRING_CHARS,
  NotificationGate,
  oversizeNotice,
  readMessage,
} from "./message-bounds";
import { shrinkMessage } from "./shrink-message";

/** An error status's body is cut to this many bytes (the SDK puts it in the error message). */
export const ERROR_BODY_BYTES = 64 * 1024;

type RequestId = string | number;

export interface HttpServerOptions {
  headers?: Record<string, string>;
  /** Something the user may want to know (notifications dropped, a message too big). */
  onNotice?: (text: string) => void;
}

export class BoundedHttpTransport extends StreamableHTTPClientTransport {
  private readonly bounds: HttpBounds;

  constructor(url: URL, options: HttpServerOptions = {}) {
    const bounds = new HttpBounds(options.onNotice);
    super(url, { requestInit: { headers: options.headers }, fetch: bounds.fetch });
    this.bounds = bounds;
  }

  override async close(): Promise<void> {
    this.bounds.finish();
    await super.close();
  }
}

function mediaType(header: string | null): string {
  return (header ?? "").split(";")[0]!.trim().toLowerCase();
}

/** The ids of the requests in a POST's body (the transport's own JSON text). */
function requestIds(body: unknown): RequestId[] {
  if (typeof body !== "string") return [];
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return [];
  }
  const ids: RequestId[] = [];
  for (const message of Array.isArray(value) ? value : [value]) {
    const m = message as { id?: unknown; method?: unknown } | null;
    if (m && typeof m.method === "string" && (typeof m.id === "string" || typeof m.id === "number"))
      ids.push(m.id);
  }
  return ids;
}

function failure(id: RequestId, message: string): unknown {
  return { jsonrpc: "2.0", id, error: { code: -32603, message } };
}

function isAnswer(message: unknown): RequestId | undefined {
  const m = message as { id?: unknown; method?: unknown } | null;
  if (!m || typeof m !== "object" || "method" in m) return undefined;
  return typeof m.id === "string" || typeof m.id === "number" ? m.id : undefined;
}

function chunkBuffer(chunk: Uint8Array): Buffer {
  return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/** The same response with another body (headers that described the old body left out). */
function rebody(response: Response, body: string | Buffer | ReadableStream<Uint8Array> | null): Response {
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  headers.delete("content-encoding");
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}

/** The whole body if it has at most `max` bytes; null (and the rest not read) if more. */
async function readAtMost(body: ReadableStream<Uint8Array>, max: number): Promise<Buffer | null> {
  const reader = body.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return Buffer.concat(chunks, size);
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(chunkBuffer(value));
  }
}

/** One SSE event as it arrives: its data lines are kept as bytes (decoded only by the parse). */
interface SseEvent {
  id?: string;
  type?: string;
  retry?: string;
  data: Buffer[];
}

/**
 * Splits an SSE byte stream into events in time linear in the bytes, and counts the bytes of
 * the event under way (its complete lines and the line being received) so that the caller can
 * stop one over the limit before it is whole. Lines end in LF or CRLF (a lone CR, allowed by the
 * spec, is not a line end here: no MCP server sends one).
 */
class SseSplitter {
  /** The event under way passed `max` bytes: nothing more is taken. */
  over = false;
  /** The bytes of the event under way, the current line included. */
  private eventBytes = 0;
  private line: Buffer[] = [];
  private event: SseEvent = { data: [] };

  constructor(private readonly max: number) {}

  /** The events that `chunk` completes, up to one that passes `max` bytes (then `over`). */
  push(chunk: Buffer): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    while (!this.over) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      this.eventBytes += end - start + (newline === -1 ? 0 : 1);
      if (this.eventBytes > this.max) {
        this.over = true;
        this.line = [];
        this.event = { data: [] };
        break;
      }
      if (end > start) this.line.push(chunk.subarray(start, end));
      if (newline === -1) break;
      const done = this.endLine();
      if (done) events.push(done);
      start = newline + 1;
    }
    return events;
  }

  private endLine(): SseEvent | null {
    let line = this.line.length === 1 ? this.line[0]! : Buffer.concat(this.line);
    this.line = [];
    if (line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, -1);
    if (line.length === 0) {
      const event = this.event;
      this.event = { data: [] };
      this.eventBytes = 0;
      return event.data.length > 0 || event.id !== undefined || event.retry !== undefined ? event : null;
    }
    const colon = line.indexOf(0x3a);
    if (colon === 0) return null; // a comment
    const name = (colon === -1 ? line : line.subarray(0, colon)).toString("utf8");
    let value = colon === -1 ? Buffer.alloc(0) : line.subarray(colon + 1);
    if (value[0] === 0x20) value = value.subarray(1);
    if (name === "data") this.event.data.push(value);
    else if (name === "id") this.event.id = value.toString("utf8");
    else if (name === "event") this.event.type = value.toString("utf8");
    else if (name === "retry") this.event.retry = value.toString("utf8");
    return null;
  }
}

/** One connection's bounds: the fetch given to the SDK and the notification budget. */
class HttpBounds {
  private readonly gate: NotificationGate;
  /** The standalone stream sent a message over the limit: it is not opened again. */
  private standaloneRefused = false;

  constructor(private readonly onNotice?: (text: string) => void) {
    this.gate = new NotificationGate(onNotice);
  }

  finish(): void {
    this.gate.finish();
  }

  readonly fetch: FetchLike = async (url, init) => {
    const method = (init?.method ?? "GET").toUpperCase();
    // 405: the SDK's "this server offers no standalone stream", after which it does not ask again.
    if (method === "GET" && this.standaloneRefused)
      return new Response(null, { status: 405, statusText: "Method Not Allowed" });
    const response = await fetch(url, init);
    const body = response.body;
    // No body the SDK reads (it cancels a 202's).
    if (!body || [202, 204, 205].includes(response.status)) return response;
    if (response.status >= 400) return rebody(response, await this.errorBody(body));
    if (!response.ok) return response; // a redirect: the SDK follows it, or says why not
    const type = mediaType(response.headers.get("content-type"));
    if (type === "text/event-stream")
      return rebody(
        response,
        this.events(body, method === "POST" ? requestIds(init?.body) : [], method === "GET"),
      );
    if (type === "application/json" && method === "POST") {
      const ids = requestIds(init?.body);
      // The SDK reads a JSON answer only for a POST that carried requests.
      if (ids.length > 0) return rebody(response, await this.json(response, body, ids));
    }
    return response;
  };

  private async errorBody(body: ReadableStream<Uint8Array>): Promise<Buffer> {
    const reader = body.getReader();
    const chunks: Buffer[] = [];
    let size = 0;
    while (size < ERROR_BODY_BYTES) {
      const { value, done } = await reader.read();
      if (done) return Buffer.concat(chunks, size);
      chunks.push(chunkBuffer(value));
      size += value.byteLength;
    }
    await reader.cancel().catch(() => undefined);
    return Buffer.concat(chunks, size).subarray(0, ERROR_BODY_BYTES);
  }

  /** A JSON answer, read up to the limit, parsed and cut: the text the SDK gets in its place. */
  private async json(
    response: Response,
    body: ReadableStream<Uint8Array>,
    ids: RequestId[],
  ): Promise<string> {
    const declared = Number(response.headers.get("content-length") ?? NaN);
    let bytes: Buffer | null = null;
    if (declared > MAX_MESSAGE_BYTES) await body.cancel().catch(() => undefined);
    else bytes = await readAtMost(body, MAX_MESSAGE_BYTES);
    if (!bytes) {
      const text = oversizeNotice(declared > MAX_MESSAGE_BYTES ? declared : undefined);
      this.onNotice?.(text);
      return JSON.stringify(ids.map((id) => failure(id, text)));
    }
    const value = await readMessage(bytes);
    if (value instanceof Error) {
      const text = `The server's answer is not JSON: ${value.message}`;
      return JSON.stringify(ids.map((id) => failure(id, text)));
    }
    return JSON.stringify(this.admitted(value));
  }

  /** The messages in a parsed body that go on to the SDK: each cut down, notifications rationed. */
  private admitted(value: unknown): unknown[] {
    // A batch: the worker cut its strings; each message's tool result is cut here.
    const messages = Array.isArray(value)
      ? value.map((m) => shrinkMessage(m, TOOL_RESULT_MAX_CHARS, MAX_STRING_CHARS))
      : [value];
    return messages.filter((m) => this.gate.admit(m));
  }

  /** An event stream, event by event: what the SDK reads in its place. */
  private events(
    body: ReadableStream<Uint8Array>,
    requests: RequestId[],
    standalone: boolean,
  ): ReadableStream<Uint8Array> {
    const reader = body.getReader();
    const splitter = new SseSplitter(MAX_MESSAGE_BYTES);
    const unanswered = new Set(requests);
    const encoder = new TextEncoder();
    let ended = false;
    const end = async (controller: ReadableStreamDefaultController<Uint8Array>, out: string) => {
      ended = true;
      if (out) controller.enqueue(encoder.encode(out));
      controller.close();
      await reader.cancel().catch(() => undefined);
    };
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        let out = "";
        while (!out) {
          if (ended) return;
          const { value, done } = await reader.read();
          if (done) {
            ended = true;
            controller.close();
            return;
          }
          for (const event of splitter.push(chunkBuffer(value))) out += await this.event(event, unanswered);
          if (splitter.over) {
            const text = oversizeNotice();
            this.onNotice?.(text);
            if (standalone) this.standaloneRefused = true;
            for (const id of unanswered) out += `data: ${JSON.stringify(failure(id, text))}\n\n`;
            await end(controller, out);
            return;
          }
          if (requests.length > 0 && unanswered.size === 0) {
            await end(controller, out);
            return;
          }
        }
        controller.enqueue(encoder.encode(out));
      },
      cancel: (reason) => reader.cancel(reason),
    });
  }

  /** One event as the SDK gets it: its messages parsed, cut, rationed and written again. */
  private async event(event: SseEvent, unanswered: Set<RequestId>): Promise<string> {
    let out = "";
    if (event.retry !== undefined) out += `retry: ${event.retry}\n`;
    if (event.id !== undefined) out += `id: ${event.id}\n`;
    // The SDK reads only `message` events with data; others are not even parsed.
    if (
      event.data.length === 0 ||
      (event.type !== undefined && event.type !== "message" && event.type !== "")
    )
      return out ? out + "\n" : "";
    const parts: Buffer[] = [];
    for (const [i, line] of event.data.entries()) parts.push(...(i > 0 ? [Buffer.from("\n"), line] : [line]));
    const value = await readMessage(parts.length === 1 ? parts[0]! : Buffer.concat(parts));
    if (value instanceof Error) {
      this.onNotice?.(`The server sent an event that is not JSON: ${value.message}`);
      return out ? out + "\n" : "";
    }
    const messages = this.admitted(value);
    if (messages.length === 0) return out ? out + "\n" : "";
    for (const message of messages) {
      const id = isAnswer(message);
      if (id !== undefined) unanswered.delete(id);
      out += `data: ${JSON.stringify(message)}\n\n`;
    }
    return out;
  }
}
