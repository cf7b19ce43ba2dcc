/**
 * Malformed replies from the MCP message worker, with a scripted worker in this thread: the
 * request a malformed reply names is parsed here instead; one that names none ends the worker
 * and everything waiting is parsed here; a reply to no waiting request is logged and dropped.
 * Nobody is left waiting, and the next message goes to a fresh worker. The real worker's side
 * (a malformed request) is in stdio-transport.test.ts.
 */
import { EventEmitter } from "node:events";
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { MessageWorker, type WorkerLike } from "./message-worker";

interface Request {
  id: number;
  bytes: Uint8Array;
}

/** Workers whose answer to each request is `script`'s raw messages (default: a right answer). */
function scriptedWorkers() {
  const workers: { terminated: boolean; emit(message: unknown): void }[] = [];
  const control = {
    script: (request: Request): unknown[] => [
      { id: request.id, kind: "value", value: { echoed: new TextDecoder().decode(request.bytes) } },
    ],
  };
  const start = (): WorkerLike => {
    const events = new EventEmitter();
    const record = { terminated: false, emit: (message: unknown) => events.emit("message", message) };
    workers.push(record);
    return {
      postMessage(request) {
        setImmediate(() => control.script(request).forEach(record.emit));
      },
      on(event: string, listener: (message: unknown) => void) {
        events.on(event, listener);
        return this;
      },
      terminate() {
        record.terminated = true;
        setImmediate(() => events.emit("exit"));
      },
      unref: () => undefined,
    };
  };
  return { start, workers, control };
}

let stderr: MockInstance<typeof process.stderr.write>;
beforeEach(() => {
  stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
});
afterEach(() => {
  stderr.mockRestore();
});
const logged = (): string => stderr.mock.calls.map((call) => String(call[0])).join("");

const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

describe("MessageWorker: malformed replies", () => {
  it("a malformed reply naming its request: that message is parsed here, the worker kept", async () => {
    const { start, workers, control } = scriptedWorkers();
    const worker = new MessageWorker(start);
    for (const reply of [
      { kind: "value" },
      { kind: "error", message: 5 },
      { kind: "done", value: 1 },
      { value: 1 },
    ]) {
      control.script = (request) => [{ ...reply, id: request.id }];
      await expect(worker.parse(bytes({ a: "x".repeat(50) }), 10, 100)).resolves.toEqual({
        a: "x".repeat(50),
      });
    }
    // Here too, a text that is not JSON is refused with the parse error.
    await expect(worker.parse(new TextEncoder().encode("{nope"), 10, 100)).rejects.toThrow(/JSON/);
    expect(workers).toHaveLength(1);
    expect(workers[0]!.terminated).toBe(false);
    expect(logged()).toMatch(
      /\[mcp\] the message worker sent a malformed reply \(.+\); parsing that message here/,
    );
  });

  it("a malformed reply naming no request ends the worker; what waited is parsed here, the next goes to a new worker", async () => {
    const { start, workers, control } = scriptedWorkers();
    const worker = new MessageWorker(start);
    control.script = () => [];
    const first = worker.parse(bytes({ n: 1 }), 10, 100);
    const second = worker.parse(bytes({ n: 2 }), 10, 100);
    await new Promise((resolve) => setImmediate(resolve));
    for (const garbage of ["hello", null, { kind: "value", value: 1 }]) {
      workers[0]!.emit(garbage);
    }
    await expect(first).resolves.toEqual({ n: 1 });
    await expect(second).resolves.toEqual({ n: 2 });
    expect(workers[0]!.terminated).toBe(true);
    expect(worker.running).toBe(false);
    expect(logged()).toMatch(/malformed reply \(.+\); ending it/);
    control.script = scriptedWorkers().control.script;
    await expect(worker.parse(bytes("hi"), 10, 100)).resolves.toEqual({ echoed: '"hi"' });
    expect(workers).toHaveLength(2);
  });

  it("a reply to a request not waiting is logged and dropped", async () => {
    const { start, workers, control } = scriptedWorkers();
    const worker = new MessageWorker(start);
    control.script = (request) => [
      { id: request.id + 50, kind: "value", value: "stray" },
      { id: request.id, kind: "value", value: "mine" },
    ];
    await expect(worker.parse(bytes(1), 10, 100)).resolves.toBe("mine");
    expect(logged()).toContain("the message worker answered request 50, which is not waiting");
    expect(workers[0]!.terminated).toBe(false);
  });
});
