/**
 * Big MCP messages are parsed and cut down in a worker thread, not on the thread that serves
 * the UI and the API: JSON.parse of a 30 MB tool result, and the walk over it, take time in
 * proportion to its size. The worker gets the raw bytes (transferred, not copied) and sends
 * back the message as shrinkMessage leaves it (a tool result's text at most `maxChars` per
 * part), so only that small value crosses back. One worker for the whole app, started on the
 * first big message and ended after a short idle time (its memory goes with it).
 */
import { Worker } from "node:worker_threads";
import { z } from "zod";
import { describeIssues } from "../../../../common/zod-issues";
import { shrinkMessage } from "./shrink-message";

/** Messages at least this long (bytes) are parsed off the main thread. */
export const OFF_THREAD_BYTES = 256 * 1024;
const IDLE_MS = 2000;

/**
 * Main thread → worker. The worker's code is source text (below) that can import nothing, zod
 * included, so it checks this shape itself with `typeof`; a request it cannot read and that names
 * its id is answered "internal" (the parser then runs here), one without an id is dropped.
 */
interface WorkerRequest {
  id: number;
  bytes: Uint8Array;
  maxChars: number;
  maxString: number;
}

const id = z.number().int();

/**
 * Worker → main thread, parsed there: the message as shrinkMessage left it, the text's parse
 * error (not JSON), or "internal" (the worker could not do it: done on the main thread instead).
 * `value` is not walked: it is the server's message, validated later by the MCP client.
 */
const WorkerReplySchema = z.discriminatedUnion("kind", [
  z.object({ id, kind: z.literal("value"), value: z.unknown() }),
  z.object({ id, kind: z.literal("error"), message: z.string() }),
  z.object({ id, kind: z.literal("internal"), message: z.string() }),
]);
type WorkerReply = z.infer<typeof WorkerReplySchema>;

// The function's source as compiled: esbuild with keepNames (tsx, which runs the headless server
// from source) wraps inner functions in its __name helper, defined here as a no-op.
const SOURCE = `
const { parentPort } = require("node:worker_threads");
const __name = (target) => target;
const shrinkMessage = (${shrinkMessage.toString()});
const decoder = new TextDecoder();
const why = (error) => (error instanceof Error ? error.message : String(error));
parentPort.on("message", (request) => {
  const { id, bytes, maxChars, maxString } = request !== null && typeof request === "object" ? request : {};
  if (!Number.isInteger(id) || !(bytes instanceof Uint8Array) || typeof maxChars !== "number" || typeof maxString !== "number") {
    if (Number.isInteger(id)) parentPort.postMessage({ id, kind: "internal", message: "a malformed request" });
    return;
  }
  let parsed;
  try {
    parsed = JSON.parse(decoder.decode(bytes));
  } catch (error) {
    parentPort.postMessage({ id, kind: "error", message: why(error) });
    return;
  }
  try {
    parsed = shrinkMessage(parsed, maxChars, maxString);
  } catch (error) {
    parentPort.postMessage({ id, kind: "internal", message: why(error) });
    return;
  }
  try {
    parentPort.postMessage({ id, kind: "value", value: parsed });
  } catch (error) {
    // Too deep to send back (structured clone): answer the request it belongs to, if any.
    const rpcId = parsed && typeof parsed === "object" ? parsed.id : undefined;
    const message = "The server's message could not be read: " + why(error);
    parentPort.postMessage(
      rpcId === undefined
        ? { id, kind: "error", message }
        : { id, kind: "value", value: { jsonrpc: "2.0", id: rpcId, error: { code: -32603, message } } },
    );
  }
});
`;

/** The part of a worker_threads Worker used here (tests script one). */
export interface WorkerLike {
  postMessage(value: WorkerRequest, transfer: ArrayBuffer[]): void;
  on(event: "message", listener: (message: unknown) => void): unknown;
  on(event: "error" | "exit", listener: () => void): unknown;
  terminate(): unknown;
  unref(): void;
}

/** The worker running the source above. */
export function startMessageWorker(): WorkerLike {
  return new Worker(SOURCE, { eval: true });
}

interface Waiting {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  /** The worker could not do it: done here instead (correct, if not off the thread). */
  fallback: () => void;
}

/** Parses on a worker started on demand and ended when idle. */
export class MessageWorker {
  private worker: WorkerLike | null = null;
  private idle: NodeJS.Timeout | undefined;
  private nextId = 0;
  private readonly waiting = new Map<number, Waiting>();

  constructor(private readonly start: () => WorkerLike = startMessageWorker) {}

  /**
   * JSON.parse + shrinkMessage of `bytes` in the worker. Rejects with the parse error's message
   * for text that is not JSON.
   */
  parse(bytes: Uint8Array, maxChars: number, maxString: number): Promise<unknown> {
    clearTimeout(this.idle);
    const id = this.nextId++;
    // Sent as a copy that is then transferred: the caller's buffer stays usable for a fallback.
    const own = new Uint8Array(bytes);
    return new Promise((resolve, reject) => {
      const fallback = () => {
        try {
          resolve(shrinkMessage(JSON.parse(Buffer.from(bytes).toString("utf8")), maxChars, maxString));
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      };
      this.waiting.set(id, { resolve, reject, fallback });
      try {
        this.theWorker().postMessage({ id, bytes: own, maxChars, maxString }, [own.buffer]);
      } catch {
        this.waiting.delete(id);
        fallback();
      }
    });
  }

  /** Whether the worker is running now (tests: it ends when idle). */
  get running(): boolean {
    return this.worker !== null;
  }

  private theWorker(): WorkerLike {
    if (this.worker) return this.worker;
    const created = this.start();
    created.unref();
    created.on("message", (message) => this.onReply(created, message));
    created.on("error", () => this.lost(created));
    created.on("exit", () => this.lost(created));
    this.worker = created;
    return created;
  }

  /**
   * A reply, checked (WorkerReplySchema). A malformed one is logged; the request it names is
   * done here instead, and when it names none the worker is ended and every waiting request is
   * done here: a worker that says what it cannot mean is not trusted with the rest.
   */
  private onReply(worker: WorkerLike, raw: unknown): void {
    const parsed = WorkerReplySchema.safeParse(raw);
    if (!parsed.success) {
      const rawId = typeof raw === "object" && raw !== null ? (raw as { id?: unknown }).id : undefined;
      const entry = typeof rawId === "number" ? this.take(rawId) : undefined;
      process.stderr.write(
        `[mcp] the message worker sent a malformed reply (${describeIssues(parsed.error)}); ` +
          `${entry ? "parsing that message here" : "ending it"}\n`,
      );
      if (entry) entry.fallback();
      else {
        this.lost(worker);
        void worker.terminate();
      }
      return;
    }
    const reply: WorkerReply = parsed.data;
    const entry = this.take(reply.id);
    if (!entry) {
      process.stderr.write(`[mcp] the message worker answered request ${reply.id}, which is not waiting\n`);
      return;
    }
    if (reply.kind === "internal") entry.fallback();
    else if (reply.kind === "error") entry.reject(new Error(reply.message));
    else entry.resolve(reply.value);
  }

  /** The waiting request `id`, removed; the worker ends once idle. */
  private take(id: number): Waiting | undefined {
    const entry = this.waiting.get(id);
    if (!entry) return undefined;
    this.waiting.delete(id);
    if (this.waiting.size === 0) this.scheduleEnd();
    return entry;
  }

  /** The worker is gone or not trusted: whatever it had is done here. */
  private lost(worker: WorkerLike): void {
    // One ended when idle had nothing waiting; what waits now is a newer worker's.
    if (this.worker !== worker) return;
    this.worker = null;
    const entries = [...this.waiting.values()];
    this.waiting.clear();
    for (const entry of entries) entry.fallback();
  }

  private scheduleEnd(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      if (this.waiting.size > 0 || !this.worker) return;
      const ending = this.worker;
      this.worker = null;
      void ending.terminate();
    }, IDLE_MS);
    this.idle.unref();
  }
}

const shared = new MessageWorker();

/** MessageWorker.parse on the app's one worker. */
export function parseOffThread(bytes: Uint8Array, maxChars: number, maxString: number): Promise<unknown> {
  return shared.parse(bytes, maxChars, maxString);
}

/** Whether the app's worker is running now (tests: it ends when idle). */
export function messageWorkerRunning(): boolean {
  return shared.running;
}
