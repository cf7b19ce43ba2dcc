/**
 * The pieces of the bounded stdio transport: line splitting in linear time with an oversized
 * line skipped (not the connection), results cut before validation, the notification budget.
 * End to end against hostile server processes: mcp-hostile.test.ts.
 */
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { type Line, LineSplitter } from "./line-splitter";
import {
  MessageWorker,
  messageWorkerRunning,
  parseOffThread,
  startMessageWorker,
  type WorkerLike,
} from "./message-worker";
import { outcomeOf } from "./mcp-result";
import { shrinkMessage } from "./shrink-message";
import { RateLimit } from "./stdio-transport";

describe("LineSplitter", () => {
  it("splits lines across chunks, drops CR and empty lines", () => {
    const lines: string[] = [];
    const splitter = new LineSplitter(1024, (l) => lines.push(l.kind === "line" ? l.bytes.toString() : "?"));
    for (const chunk of ['{"a"', ":1}\r\n\n", '{"b":2}\n{"c"', ":3}\n"]) splitter.push(Buffer.from(chunk));
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it("skips a line over the limit as it streams, keeping its head, and goes on with the next", () => {
    const lines: Line[] = [];
    const splitter = new LineSplitter(100, (l) => lines.push(l));
    splitter.push(Buffer.from('{"jsonrpc":"2.0","id":7,"result":"'));
    for (let i = 0; i < 50; i++) splitter.push(Buffer.from("x".repeat(64)));
    splitter.push(Buffer.from('"}\n{"ok":1}\n'));
    expect(lines).toHaveLength(2);
    const [big, next] = lines;
    expect(big?.kind).toBe("oversized");
    if (big?.kind === "oversized") {
      expect(big.bytes).toBe(34 + 50 * 64 + 2);
      expect(big.head.toString()).toMatch(/^\{"jsonrpc":"2.0","id":7/);
    }
    expect(next?.kind === "line" && next.bytes.toString()).toBe('{"ok":1}');
  });
});

describe("shrinkMessage", () => {
  it("cuts each result part and records how much was cut; the marker gives the real size", () => {
    const message = {
      jsonrpc: "2.0",
      id: 1,
      result: {
        content: [
          { type: "text", text: "a".repeat(50_000) },
          { type: "image", mimeType: "image/png", data: "QUJD".repeat(10_000) },
        ],
      },
    };
    const shrunk = shrinkMessage(message, 16_000, 256 * 1024) as typeof message;
    expect((shrunk.result.content[0] as { text: string }).text).toHaveLength(16_000);
    expect(shrunk.result.content[1]!.data).toBe("");
    const outcome = outcomeOf(shrunk.result);
    expect(outcome.ok && outcome.truncated).toBe(true);
    // 16,000 kept + 34,000 cut + the image's line and its newline.
    expect(outcome.ok && outcome.text.slice(-80)).toContain("[truncated: the result has 50043 characters");
    const image = outcomeOf({ content: [shrunk.result.content[1]] });
    expect(image.ok && image.text).toBe("[image: image/png, 30000 bytes, not shown]");
  });

  it("turns oversized structured content into cut text", () => {
    const big = { rows: Array.from({ length: 5000 }, (_, i) => ({ i })) };
    const shrunk = shrinkMessage({ result: { structuredContent: big } }, 1000, 256 * 1024) as {
      result: { content: { text: string }[]; structuredContent?: unknown };
    };
    expect(shrunk.result.structuredContent).toBeUndefined();
    expect(shrunk.result.content[0]!.text).toHaveLength(1000);
  });

  it("cuts any other long string, however deep", () => {
    let value: Record<string, unknown> = { note: "z".repeat(1000) };
    for (let i = 0; i < 5000; i++) value = { next: value };
    shrinkMessage({ method: "notifications/message", params: value }, 16_000, 100);
    let inner: Record<string, unknown> = value;
    while (inner.next) inner = inner.next as Record<string, unknown>;
    expect(inner.note).toHaveLength(100);
  });
});

describe("parseOffThread", () => {
  it("parses and cuts in the worker, and rejects text that is not JSON", async () => {
    const text = JSON.stringify({
      jsonrpc: "2.0",
      id: 3,
      result: { content: [{ type: "text", text: "q".repeat(1_000_000) }] },
    });
    const value = (await parseOffThread(Buffer.from(text), 16_000, 256 * 1024)) as {
      result: { content: { text: string }[]; "x-macaron-cut": number };
    };
    expect(value.result.content[0]!.text).toHaveLength(16_000);
    expect(value.result["x-macaron-cut"]).toBe(1_000_000 - 16_000);
    expect(messageWorkerRunning()).toBe(true);
    await expect(parseOffThread(Buffer.from("{not json"), 16_000, 1000)).rejects.toThrow(/JSON/);
  });

  it("the worker answers a malformed request that names its id 'internal', drops one without, and keeps working", async () => {
    // The worker's answer to request 900 reaches no waiting request: logged, not shown here.
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    onTestFinished(() => stderr.mockRestore());
    let real: WorkerLike | undefined;
    const worker = new MessageWorker(() => (real = startMessageWorker()));
    await expect(worker.parse(Buffer.from('{"a":1}'), 10, 100)).resolves.toEqual({ a: 1 });
    const replies: unknown[] = [];
    real!.on("message", (m) => replies.push(m));
    const post = (value: unknown) => real!.postMessage(value as never, []);
    post({ id: 900, bytes: "not bytes", maxChars: 10, maxString: 100 });
    post({ bytes: new Uint8Array(2), maxChars: 10, maxString: 100 });
    post("garbage");
    post(null);
    await expect(worker.parse(Buffer.from('{"b":2}'), 10, 100)).resolves.toEqual({ b: 2 });
    expect(stderr).toHaveBeenCalledWith(
      expect.stringContaining("answered request 900, which is not waiting"),
    );
    expect(replies).toEqual([
      { id: 900, kind: "internal", message: "a malformed request" },
      { id: 1, kind: "value", value: { b: 2 } },
    ]);
    expect(worker.running).toBe(true);
  });
});

describe("RateLimit", () => {
  it("lets a burst through, then one per 1/rate seconds", () => {
    let clock = 0;
    const limit = new RateLimit(100, 200, () => clock);
    let taken = 0;
    for (let i = 0; i < 10_000; i++) if (limit.take()) taken++;
    expect(taken).toBe(200);
    clock += 1000; // one second: 100 more
    taken = 0;
    for (let i = 0; i < 10_000; i++) if (limit.take()) taken++;
    expect(taken).toBe(100);
  });
});
