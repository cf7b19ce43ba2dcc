/**
 * The stdio transport for MCP servers, in place of the SDK's StdioClientTransport (same process
 * handling: the same spawn, environment and close sequence), with bounds on what a server can
 * make the app do:
 * - messages are split in linear time (line-splitter.ts); one over MAX_MESSAGE_BYTES is dropped
 *   as it streams and the request it answers fails with a sentence, the connection stays up;
 * - messages over OFF_THREAD_BYTES are parsed and cut down in a worker (message-worker.ts), the
 *   others here, and all are cut the same way (shrink-message.ts) before the SDK sees them;
 *   order is kept: a small message waits for a big one before it;
 * - notifications beyond a rate (NOTIFICATION_RATE a second, bursts of NOTIFICATION_BURST) are
 *   dropped and counted, so a flood cannot keep the thread busy with the SDK's handlers.
 * The limits, the parse and the notification budget are shared with http-transport.ts
 * (message-bounds.ts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { PassThrough } from "node:stream";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { type Line, LineSplitter } from "./line-splitter";
import { MAX_MESSAGE_BYTES, NotificationGate, oversizeNotice, readMessage } from "./message-bounds";
import { OFF_THREAD_BYTES } from "./message-worker";

export {
  MAX_MESSAGE_BYTES,
  MAX_STRING_CHARS,
  NOTIFICATION_BURST,
  NOTIFICATION_RATE,
  RateLimit,
} from "./message-bounds";

export interface StdioServerOptions {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** Something the user may want to know (notifications dropped, a message too big). */
  onNotice?: (text: string) => void;
}

/** The request id at the start of a message too big to parse, if it is there. */
function leadingId(head: Buffer): string | number | null {
  const text = head.toString("utf8");
  const match =
    /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")/.exec(text);
  if (!match) return null;
  return match[1]!.startsWith('"') ? (JSON.parse(match[1]!) as string) : Number(match[1]);
}

export class BoundedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The server's stderr, available before start() so no early line is lost. */
  readonly stderr = new PassThrough();
  private process: ChildProcess | undefined;
  private readonly splitter = new LineSplitter(MAX_MESSAGE_BYTES, (line) => this.receive(line));
  private readonly notifications: NotificationGate;
  /** Lines waiting behind one that is parsed in the worker. */
  private queued = 0;
  private delivery: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly server: StdioServerOptions) {
    this.notifications = new NotificationGate(server.onNotice);
  }

  get pid(): number | null {
    return this.process?.pid ?? null;
  }

  start(): Promise<void> {
    if (this.process) throw new Error("The transport is started already.");
    return new Promise((resolve, reject) => {
      const child = spawn(this.server.command, this.server.args ?? [], {
        env: { ...getDefaultEnvironment(), ...this.server.env },
        stdio: ["pipe", "pipe", "pipe"],
        shell: false,
        windowsHide: process.platform === "win32",
        cwd: this.server.cwd,
      });
      this.process = child;
      child.on("error", (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on("spawn", () => resolve());
      child.on("close", () => {
        this.process = undefined;
        this.finish();
      });
      child.stdin?.on("error", (error) => this.onerror?.(error));
      child.stdout?.on("data", (chunk: Buffer) => this.splitter.push(chunk));
      child.stdout?.on("error", (error) => this.onerror?.(error));
      child.stderr?.pipe(this.stderr);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.process?.stdin;
      if (!stdin) {
        reject(new Error("Not connected"));
        return;
      }
      if (stdin.write(JSON.stringify(message) + "\n")) resolve();
      else stdin.once("drain", resolve);
    });
  }

  /** Like the SDK's: end stdin, then SIGTERM after 2 s, then SIGKILL after 2 s more. */
  async close(): Promise<void> {
    const child = this.process;
    this.process = undefined;
    if (child) {
      const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
      const wait = () => Promise.race([exited, new Promise((r) => setTimeout(r, 2000).unref())]);
      try {
        child.stdin?.end();
      } catch {
        // ignore
      }
      await wait();
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await wait();
      }
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
    this.finish();
  }

  private finish(): void {
    this.splitter.clear();
    if (this.closed) return;
    this.closed = true;
    this.notifications.finish();
    this.onclose?.();
  }

  private receive(line: Line): void {
    if (this.closed) return;
    if (line.kind === "oversized") {
      const id = leadingId(line.head);
      const text = oversizeNotice(line.bytes);
      this.server.onNotice?.(text);
      if (id === null) return;
      const answer = { jsonrpc: "2.0", id, error: { code: -32603, message: text } };
      this.inOrder(() => answer);
      return;
    }
    const bytes = line.bytes;
    this.inOrder(() => readMessage(bytes), bytes.length >= OFF_THREAD_BYTES);
  }

  /** Deliver what `produce` gives after every message before it; at once when none waits. */
  private inOrder(produce: () => unknown, slow = false): void {
    if (!slow && this.queued === 0) {
      this.deliver(produce());
      return;
    }
    this.queued += 1;
    this.delivery = this.delivery.then(async () => {
      try {
        const value: unknown = await produce();
        if (!this.closed) this.deliver(value);
      } finally {
        this.queued -= 1;
      }
    });
  }

  private deliver(value: unknown): void {
    if (value instanceof Error) {
      this.onerror?.(new Error(`The server sent a line that is not JSON: ${value.message}`));
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      this.onerror?.(new Error("The server sent a message that is not JSON-RPC."));
      return;
    }
    const message = parsed.data;
    if (!this.notifications.admit(message)) return;
    this.onmessage?.(message);
  }
}
