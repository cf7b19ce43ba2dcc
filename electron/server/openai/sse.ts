/**
 * The server-sent-events channel every streaming /v1 endpoint writes through (chat
 * completions, completions, responses, Anthropic messages). The 200 and its headers go out only
 * when the first event does, so a request that fails at once (busy, no model, a bad adapter)
 * still gets a real HTTP error status; each protocol's writer decides what its events are.
 */
import type { FastifyReply } from "fastify";
import { batchWindowFromEnv, DeltaBatcher } from "../../../common/delta-batcher";

/**
 * Streamed text pieces are merged into one delta event per this many ms (the first at once):
 * each event costs a JSON.stringify, a socket write and a client-side parse. The engine already
 * merges tokens per window (native/engine/runtime.ts TOKEN_BATCH_MS); this covers the pieces
 * that still come closer together (MACARON_TOKEN_BATCH_MS=0 turns both off, for bench/hops.ts).
 */
export const SSE_BATCH_MS = 4;

/**
 * Run `generate` with its streamed text merged per SSE_BATCH_MS into calls of `write` (one delta
 * event each, its text the pieces concatenated, which is what clients accumulate anyway). What
 * is pending is written before this settles, so a tool call, the final event or an error event
 * written next comes after all of the text.
 */
export async function withBatchedDeltas<T>(
  write: (text: string) => void,
  generate: (onToken: (text: string) => void) => Promise<T>,
  windowMs: number = batchWindowFromEnv(process.env.MACARON_TOKEN_BATCH_MS, SSE_BATCH_MS),
): Promise<T> {
  const deltas = new DeltaBatcher(write, { windowMs });
  try {
    return await generate((text) => deltas.push(text));
  } finally {
    deltas.flush();
  }
}

const HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  connection: "keep-alive",
  "x-content-type-options": "nosniff",
  // Proxies (nginx) must not buffer the stream.
  "x-accel-buffering": "no",
} as const;

export class SseChannel {
  private opened = false;

  constructor(private readonly reply: FastifyReply) {}

  /** True once the headers were sent: from then on, failures can only be events. */
  get started(): boolean {
    return this.opened;
  }

  /** Sends the headers; true on the first call only (the caller then writes its opening events). */
  open(): boolean {
    if (this.opened) return false;
    this.opened = true;
    this.reply.hijack();
    // With the headers set on the reply before (the seed, CORS): hijacking skips Fastify's own.
    const set = Object.entries(this.reply.getHeaders()).filter(([, v]) => v !== undefined);
    this.reply.raw.writeHead(200, { ...(Object.fromEntries(set) as Record<string, string>), ...HEADERS });
    return true;
  }

  /** One event: `data:` JSON, with an `event:` line when the protocol names its events. */
  send(data: unknown, event?: string): void {
    if (this.reply.raw.writableEnded) return;
    const name = event === undefined ? "" : `event: ${event}\n`;
    this.reply.raw.write(`${name}data: ${JSON.stringify(data)}\n\n`);
  }

  /** Ends the stream; OpenAI's chat and completion streams end with `data: [DONE]`. */
  end(done = false): void {
    if (this.reply.raw.writableEnded) return;
    if (done) this.reply.raw.write("data: [DONE]\n\n");
    this.reply.raw.end();
  }
}
