/**
 * Big MCP messages are parsed and cut down in a worker thread, not on the thread that serves
 * the UI and the API: JSON.parse of a 30 MB tool result, and the walk over it, take time in
 * proportion to its size. The worker gets the raw bytes (transferred, not copied) and sends
 * back the message as shrinkMessage leaves it (a tool result's text at most `maxChars` per
 * part), so only that small value crosses back. One worker for the whole app, started on the
 * first big message and ended after a short idle time (its memory goes with it).
 */
import { Worker } from "node:worker_threads";
import { shrinkMessage } from "./shrink-message";

/** Messages at least this long (bytes) are parsed off the main thread. */
export const OFF_THREAD_BYTES = 256 * 1024;
const IDLE_MS = 2000;

// The function's source as compiled: esbuild with keepNames (tsx, which runs the headless server
// from source) wraps inner functions in its __name helper, defined here as a no-op.
const SOURCE = `
const { parentPort } = require("node:worker_threads");
const __name = (target) => target;
const shrinkMessage = (${shrinkMessage.toString()});
const decoder = new TextDecoder();
const why = (error) => (error instanceof Error ? error.message : String(error));
parentPort.on("message", ({ id, bytes, maxChars, maxString }) => {
  let parsed;
  try {
    parsed = JSON.parse(decoder.decode(bytes));
  } catch (error) {
    parentPort.postMessage({ id, error: why(error) });
    return;
  }
  try {
    parsed = shrinkMessage(parsed, maxChars, maxString);
  } catch (error) {
    parentPort.postMessage({ id, internal: why(error) });
    return;
  }
  try {
    parentPort.postMessage({ id, value: parsed });
  } catch (error) {
    // Too deep to send back (structured clone): answer the request it belongs to, if any.
    const rpcId = parsed && typeof parsed === "object" ? parsed.id : undefined;
    const message = "The server's message could not be read: " + why(error);
    parentPort.postMessage(
      rpcId === undefined ? { id, error: message } : { id, value: { jsonrpc: "2.0", id: rpcId, error: { code: -32603, message } } },
    );
  }
});
`;

interface Waiting {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  /** The worker could not do it: done here instead (correct, if not off the thread). */
  fallback: () => void;
}

let worker: Worker | null = null;
let idle: NodeJS.Timeout | undefined;
let nextId = 0;
const waiting = new Map<number, Waiting>();

function failAll(): void {
  const entries = [...waiting.values()];
  waiting.clear();
  for (const entry of entries) entry.fallback();
}

function theWorker(): Worker {
  if (worker) return worker;
  const created = new Worker(SOURCE, { eval: true });
  created.unref();
  created.on("message", (reply: { id: number; value?: unknown; error?: string; internal?: string }) => {
    const entry = waiting.get(reply.id);
    if (!entry) return;
    waiting.delete(reply.id);
    if (reply.internal !== undefined) entry.fallback();
    else if (reply.error !== undefined) entry.reject(new Error(reply.error));
    else entry.resolve(reply.value);
    if (waiting.size === 0) scheduleEnd();
  });
  created.on("error", () => {
    if (worker === created) worker = null;
    failAll();
  });
  created.on("exit", () => {
    if (worker === created) worker = null;
    failAll();
  });
  worker = created;
  return created;
}

function scheduleEnd(): void {
  clearTimeout(idle);
  idle = setTimeout(() => {
    if (waiting.size > 0 || !worker) return;
    const ending = worker;
    worker = null;
    void ending.terminate();
  }, IDLE_MS);
  idle.unref();
}

/**
 * JSON.parse + shrinkMessage of `bytes` in the worker. Rejects with the parse error's message
 * for text that is not JSON.
 */
export function parseOffThread(bytes: Uint8Array, maxChars: number, maxString: number): Promise<unknown> {
  clearTimeout(idle);
  const id = nextId++;
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
    waiting.set(id, { resolve, reject, fallback });
    try {
      theWorker().postMessage({ id, bytes: own, maxChars, maxString }, [own.buffer]);
    } catch {
      waiting.delete(id);
      fallback();
    }
  });
}

/** Whether the worker is running now (tests: it ends when idle). */
export function messageWorkerRunning(): boolean {
  return worker !== null;
}
