/**
 * The code sandbox's verdicts, in both languages: passing code, failing code, a timeout (an
 * infinite loop), a crash or memory bomb, and hostile code (files, processes, the network,
 * exiting). One sandbox child for the file; a timeout or a memory kill replaces it, and the
 * tests after it check the replacement still works.
 */
import { afterAll, describe, expect, it, vi } from "vitest";
import { forkNodeChild, type NodeChild, type StartNodeChild } from "../../process/node-child";
import { CodeSandbox, type SandboxRequest } from "./sandbox";

// Generous: the CI machine is slow and shared. The limit is behaviour (a verdict), not a race.
const sandbox = new CodeSandbox({ timeoutMs: 3_000, memoryMb: 1_024, heapMb: 128 });
afterAll(() => sandbox.close());

const js = (
  code: string,
  calls: SandboxRequest["calls"] = [{ args: [2, 3], expect: 5 }],
): SandboxRequest => ({
  language: "js",
  code,
  entry: null,
  calls,
});
const py = (
  code: string,
  calls: SandboxRequest["calls"] = [{ args: [2, 3], expect: 5 }],
): SandboxRequest => ({
  language: "python",
  code,
  entry: null,
  calls,
});

describe("JavaScript in the sandbox", () => {
  it("passes right code and fails wrong code, naming the failing call", async () => {
    expect(await sandbox.run(js("function add(a, b) {\n  return a + b;\n}"))).toMatchObject({
      status: "passed",
      passed: 1,
      total: 1,
    });
    expect(await sandbox.run(js("const add = (a, b) => a * b;"))).toMatchObject({
      status: "failed",
      detail: "add(2, 3) returned 6, expected 5",
    });
  });

  it("reports code that does not compile, or defines no function, as an error", async () => {
    expect((await sandbox.run(js("function add(a, b) { return a +"))).status).toBe("error");
    expect(await sandbox.run(js("const x = 1;"))).toMatchObject({
      status: "error",
      detail: "the code defines no function to test",
    });
  });

  it("refuses hostile code: require, process.exit, fetch, import, eval", async () => {
    for (const code of [
      'const fs = require("fs");\nfunction add(a, b) { return fs.readFileSync("/etc/passwd", "utf8"); }',
      "function add(a, b) { process.exit(3); }",
      'function add(a, b) { fetch("http://127.0.0.1:1/"); return a + b; }',
      'import fs from "node:fs";\nfunction add(a, b) { return a + b; }',
      'function add(a, b) { return import("node:fs"); }',
      'function add(a, b) { return eval("a + b"); }',
      'function add(a, b) { return this.constructor.constructor("return process")().pid; }',
    ]) {
      const v = await sandbox.run(js(code));
      expect(v.status, `${code}: ${v.detail}`).toBe("refused");
    }
  });

  it("stops an infinite loop at the time limit and keeps working", async () => {
    const v = await sandbox.run(js("function add(a, b) { while (true) {} }"));
    expect(v.status).toBe("timeout");
    expect(v.detail).toMatch(/3000 ms/);
    expect((await sandbox.run(js("function add(a, b) { return a + b; }"))).status).toBe("passed");
  });

  it("stops a memory bomb and keeps working", async () => {
    // V8 caps the child's heap, and allocations outside it (typed arrays) count against the cap
    // too: the child dies at the cap ("memory"), or collections near it slow the code to the
    // time limit first ("timeout"); either way the code is stopped and the memory bounded.
    for (const bomb of [
      "function add(a, b) { const xs = []; while (true) xs.push(new Array(1e6).fill(a)); }",
      "function add(a, b) { const xs = []; while (true) xs.push(new Uint8Array(5e7).fill(1)); }",
    ]) {
      const v = await sandbox.run(js(bomb));
      expect(["memory", "timeout"], `${bomb}: ${v.status} ${v.detail}`).toContain(v.status);
      expect((await sandbox.run(js("function add(a, b) { return a + b; }"))).status).toBe("passed");
    }
  });

  it("reports a crash (a thrown error, a stack overflow) as an error of the code", async () => {
    expect(await sandbox.run(js('function add(a, b) { throw new TypeError("nope"); }'))).toMatchObject({
      status: "error",
      detail: "add(2, 3) raised TypeError: nope",
    });
    expect((await sandbox.run(js("function add(a, b) { return add(a, b); }"))).status).toBe("error");
  });
});

describe("Python in the sandbox (Pyodide)", () => {
  it("passes right code and fails wrong code, naming the failing call", async () => {
    expect(await sandbox.run(py("def add(a, b):\n    return a + b"))).toMatchObject({
      status: "passed",
      passed: 1,
    });
    expect(await sandbox.run(py("def add(a, b):\n    return a - b"))).toMatchObject({
      status: "failed",
      detail: "add(2, 3) returned -1, expected 5",
    });
    // Tuples compare as lists; the stdlib is there.
    const v = await sandbox.run(
      py("import math\ndef pair(x):\n    return (x, math.floor(x / 2))", [{ args: [7], expect: [7, 3] }]),
    );
    expect(v.status).toBe("passed");
  });

  it("runs test code (asserts) after the answer", async () => {
    const ok = await sandbox.run({
      ...py("def add(a, b):\n    return a + b", []),
      testCode: "assert add(1, 1) == 2",
    });
    expect(ok.status).toBe("passed");
    const bad = await sandbox.run({
      ...py("def add(a, b):\n    return a + b", []),
      testCode: "assert add(1, 1) == 3",
    });
    expect(bad.status).toBe("failed");
  });

  it("reports a syntax error or an exception as an error", async () => {
    expect((await sandbox.run(py("def add(a, b)\n    return a + b"))).status).toBe("error");
    expect(await sandbox.run(py("def add(a, b):\n    return a / 0"))).toMatchObject({
      status: "error",
      detail: "add(2, 3) raised ZeroDivisionError: division by zero",
    });
  });

  it("refuses hostile code: import os, open(), subprocess, sockets, the host's JavaScript, exiting", async () => {
    for (const code of [
      "import os\ndef add(a, b):\n    return os.listdir('/')",
      "def add(a, b):\n    return open('/etc/passwd').read()",
      "import subprocess\ndef add(a, b):\n    return subprocess.run(['ls'])",
      "import socket\ndef add(a, b):\n    return a + b",
      "import js\ndef add(a, b):\n    return js.process.exit(1)",
      "def add(a, b):\n    raise SystemExit(1)",
      "def add(a, b):\n    __import__('os').system('true')\n    return a + b",
    ]) {
      const v = await sandbox.run(py(code));
      expect(v.status, `${code}: ${v.detail}`).toBe("refused");
    }
    // Nothing a run did outlives it: the next one has clean builtins.
    expect((await sandbox.run(py("def add(a, b):\n    return a + b"))).status).toBe("passed");
  });

  it("stops an infinite loop at the time limit; the next run loads Python again and passes", async () => {
    const v = await sandbox.run(py("def add(a, b):\n    while True:\n        pass"));
    expect(v.status).toBe("timeout");
    expect((await sandbox.run(py("def add(a, b):\n    return a + b"))).status).toBe("passed");
  });

  it("stops a memory bomb: a size past what it can address, or memory growing past the limit", async () => {
    const big = await sandbox.run(py("def add(a, b):\n    return len('x' * (10 ** 12))"));
    expect(big.status, big.detail).toBe("memory");
    // Python with its standard library takes ~250 MiB here; this sandbox allows 150 MiB more and
    // gives the code time enough to reach it, so the memory watch, not the clock, stops it.
    const tight = new CodeSandbox({ timeoutMs: 60_000, memoryMb: 400 });
    try {
      const growing = await tight.run(
        py("def add(a, b):\n    xs = []\n    while True:\n        xs.append(b'x' * (10 ** 7))"),
      );
      expect(growing.status, growing.detail).toBe("memory");
      expect(growing.detail).toMatch(/over 400 MiB/);
      expect((await tight.run(py("def add(a, b):\n    return a + b"))).status).toBe("passed");
    } finally {
      await tight.close();
    }
  }, 180_000);
});

describe("memory a finished run leaves behind", () => {
  it("does not count against the next run: a child near its limit is replaced before it", async () => {
    // The first run answers right but leaves ~300 MiB of typed arrays for the collector; loading
    // Python on top of them would pass the 450 MiB limit, and the Python run would take the blame.
    const s = new CodeSandbox({ timeoutMs: 60_000, memoryMb: 450, heapMb: 1_024 });
    try {
      const heavy = js(
        "function add(a, b) { const xs = []; for (let i = 0; i < 30; i++) xs.push(new Uint8Array(1e7).fill(1)); globalThis.kept = xs; return a + b; }",
      );
      expect((await s.run(heavy)).status).toBe("passed");
      const v = await s.run(py("def add(a, b):\n    return a + b"));
      expect(v.status, v.detail).toBe("passed");
    } finally {
      await s.close();
    }
  }, 180_000);
});

describe("malformed requests in the child (protocol.ts)", () => {
  it("answers one that names its id with a 'crashed' verdict, drops one without, and keeps working", async () => {
    const children: NodeChild[] = [];
    const start: StartNodeChild = (path, options) => {
      const child = forkNodeChild(path, options);
      children.push(child);
      return child;
    };
    const s = new CodeSandbox({ timeoutMs: 3_000 }, undefined, start);
    // The sandbox itself drops the answer to a request it did not make (and says so).
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      const add = js("function add(a, b) { return a + b; }");
      expect((await s.run(add)).status).toBe("passed");
      const child = children[0]!;
      const answers: unknown[] = [];
      child.onMessage((m) => answers.push(m));
      child.send({ id: 900, request: { ...add, language: "ruby" }, timeoutMs: 1_000 });
      child.send({ request: add, timeoutMs: 1_000 });
      child.send("garbage");
      await vi.waitFor(() => expect(answers).toHaveLength(1));
      expect(answers[0]).toMatchObject({
        type: "verdict",
        id: 900,
        verdict: {
          status: "crashed",
          detail: expect.stringMatching(
            /^the sandbox could not read the request: request\.language: /,
          ) as string,
        },
      });
      expect((await s.run(add)).status).toBe("passed");
      expect(children).toHaveLength(1);
      expect(answers).toHaveLength(3); // the second run's "running" and "verdict"
    } finally {
      stderr.mockRestore();
      await s.close();
    }
  });
});
