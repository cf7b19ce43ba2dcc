/**
 * Malformed messages between the sandbox and its child (protocol.ts). The parent side with a
 * scripted child in this process: a message it cannot read replaces the child, and the request
 * it was running gets a "crashed" verdict, never a wait without end; the next request runs in a
 * fresh child. The child's side (a malformed request answered, the child still working) runs in
 * a real child process in sandbox.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import type { NodeChild, StartNodeChild } from "../../process/node-child";
import {
  parseFromChild,
  parseToChild,
  type SandboxRequest,
  type SandboxVerdict,
  type ToChild,
} from "./protocol";
import { CodeSandbox } from "./sandbox";

const request: SandboxRequest = {
  language: "js",
  code: "const add = (a, b) => a + b;",
  entry: null,
  calls: [{ args: [2, 3], expect: 5 }],
};
const passed: SandboxVerdict = {
  status: "passed",
  passed: 1,
  total: 1,
  detail: "1 of 1 tests pass",
  durationMs: 1,
};

/** Children that answer each request with `script` (raw messages); `children` lists those started. */
function scriptedChildren() {
  const children: { killed: boolean; received: unknown[]; emit(message: unknown): void }[] = [];
  const control = {
    script: (m: ToChild): unknown[] => [
      { type: "running", id: m.id },
      { type: "verdict", id: m.id, verdict: passed },
    ],
  };
  const start: StartNodeChild = () => {
    const listeners: ((message: unknown) => void)[] = [];
    const exits: ((code: number | null, signal: string | null) => void)[] = [];
    const record = {
      killed: false,
      received: [] as unknown[],
      emit: (message: unknown) => listeners.forEach((l) => l(message)),
    };
    children.push(record);
    const child: NodeChild = {
      pid: undefined,
      stdout: null,
      stderr: null,
      send(message) {
        record.received.push(message);
        setImmediate(() => control.script(message as ToChild).forEach(record.emit));
      },
      onMessage: (l) => void listeners.push(l),
      onExit: (l) => void exits.push(l),
      kill() {
        if (record.killed) return;
        record.killed = true;
        setImmediate(() => exits.forEach((l) => l(null, "SIGTERM")));
      },
      ref: () => undefined,
      unref: () => undefined,
    };
    return child;
  };
  return { start, children, control };
}

let stderr: MockInstance<typeof process.stderr.write>;
beforeEach(() => {
  stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
});
afterEach(() => {
  stderr.mockRestore();
});
const logged = (): string => stderr.mock.calls.map((call) => String(call[0])).join("");

const entry = { path: "/nowhere/child.js", execArgv: [] };

describe("CodeSandbox: malformed messages from the child", () => {
  it("a malformed verdict, an unknown type or a message without an id: the run gets 'crashed', the next runs in a fresh child", async () => {
    const malformed: unknown[] = [
      { type: "verdict", verdict: { ...passed, status: "great" } },
      { type: "verdict", verdict: { ...passed, passed: -1 } },
      { type: "result" },
      { verdict: passed },
      "passed",
      null,
    ];
    for (const message of malformed) {
      const { start, children, control } = scriptedChildren();
      const sandbox = new CodeSandbox({ timeoutMs: 1_000 }, entry, start);
      control.script = (m) => [
        { type: "running", id: m.id },
        { ...(message as object), id: m.id },
      ];
      if (typeof message !== "object" || message === null) control.script = () => [message];
      const verdict = await sandbox.run(request);
      expect(verdict, JSON.stringify(message)).toMatchObject({ status: "crashed", passed: 0, total: 1 });
      expect(verdict.detail).toMatch(/^the sandbox process sent a malformed message \(.+\)$/);
      expect(children[0]!.killed).toBe(true);
      control.script = scriptedChildren().control.script;
      await expect(sandbox.run(request)).resolves.toEqual(passed);
      expect(children).toHaveLength(2);
      await sandbox.close();
    }
    expect(logged()).toMatch(
      /\[sandbox\] the sandbox process sent a malformed message \(verdict\.status: .*\); replacing it/,
    );
  });

  it("a verdict for a request that is not running is logged and dropped; the child is kept", async () => {
    const { start, children, control } = scriptedChildren();
    const sandbox = new CodeSandbox({ timeoutMs: 1_000 }, entry, start);
    control.script = (m) => [
      { type: "verdict", id: m.id + 100, verdict: { ...passed, detail: "not yours" } },
      { type: "running", id: m.id },
      { type: "verdict", id: m.id, verdict: passed },
    ];
    await expect(sandbox.run(request)).resolves.toEqual(passed);
    expect(children).toHaveLength(1);
    expect(children[0]!.killed).toBe(false);
    expect(logged()).toMatch(/dropped a "verdict" message for request 101, which is not running/);
    await sandbox.close();
  });

  it("a malformed message from an idle child replaces it quietly", async () => {
    const { start, children } = scriptedChildren();
    const sandbox = new CodeSandbox({ timeoutMs: 1_000 }, entry, start);
    await expect(sandbox.run(request)).resolves.toEqual(passed);
    children[0]!.emit({ type: "bogus" });
    expect(children[0]!.killed).toBe(true);
    await expect(sandbox.run(request)).resolves.toEqual(passed);
    expect(children).toHaveLength(2);
    await sandbox.close();
  });
});

describe("the sandbox protocol", () => {
  it("reads a request strictly and keeps the id of a malformed one", () => {
    const message: ToChild = { id: 3, request, timeoutMs: 5_000 };
    expect(parseToChild(message)).toEqual({ ok: true, message });
    expect(parseToChild({ ...message, request: { ...request, language: "ruby" } })).toMatchObject({
      ok: false,
      id: 3,
      problem: /^request\.language: /,
    });
    expect(parseToChild({ ...message, request: { ...request, extra: 1 } })).toMatchObject({
      ok: false,
      id: 3,
    });
    expect(parseToChild({ ...message, timeoutMs: 0 })).toMatchObject({ ok: false, problem: /^timeoutMs: / });
    expect(parseToChild({ request })).toMatchObject({ ok: false, id: undefined });
    expect(parseToChild("x")).toMatchObject({ ok: false, id: undefined });
  });

  it("reads the child's messages", () => {
    expect(parseFromChild({ type: "running", id: 1 })).toEqual({
      ok: true,
      message: { type: "running", id: 1 },
    });
    expect(parseFromChild({ type: "verdict", id: 1, verdict: passed })).toEqual({
      ok: true,
      message: { type: "verdict", id: 1, verdict: passed },
    });
    expect(parseFromChild({ type: "verdict", id: 1.5, verdict: passed })).toMatchObject({
      ok: false,
      id: undefined,
    });
  });
});
