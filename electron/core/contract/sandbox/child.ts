/**
 * The code sandbox's child process (started by sandbox.ts through the node-child seam: a fork
 * headless, a utility process in Electron; bundled as out/main/sandbox.js).
 * Runs an answer's code and its unit tests, one request at a time:
 *
 * - JavaScript in a fresh `vm` context per request: only the language's builtins (no require,
 *   process, Buffer, console, timers, fetch), no code generation from strings, a per-call time
 *   limit; values cross as JSON text only, so no object of this process reaches the code.
 * - Python in Pyodide (CPython compiled to WebAssembly, loaded on the first Python request):
 *   its file system is in memory (no host file is visible), `import js` sees an empty object,
 *   and each request runs in a fresh namespace whose builtins refuse open(), input(), exit()
 *   and imports of os, sys, io, socket, subprocess, js, pyodide and similar modules.
 *
 * The process itself is the outer wall: the parent starts it without code generation from
 * strings, with a small heap, watches its memory and kills it at the time limit.
 */
import vm from "node:vm";
import { parentPort } from "../../process/parent-port";
import {
  parseToChild,
  type FromChild,
  type SandboxCall,
  type SandboxRequest,
  type SandboxStatus,
  type SandboxVerdict,
} from "./protocol";

// Started without a parent (by hand): nothing to answer, so nothing to do.
const port = parentPort();
const send = (m: FromChild): void => {
  port?.send(m);
};

type Outcome = { ok: true; value: unknown } | { ok: false; name: string; message: string };

/** Names whose absence means the code reached for the host (a refusal, not a bug). */
const HOST_NAMES =
  /\b(require|process|module|exports|Buffer|fetch|XMLHttpRequest|WebSocket|Deno|Bun|__dirname|__filename|globalThis\.process)\b is not defined/;

function classifyJsError(name: string, message: string): SandboxStatus {
  if (name === "ReferenceError" && HOST_NAMES.test(message)) return "refused";
  if (
    /import statement outside a module|dynamic import|ERR_VM_DYNAMIC_IMPORT|Code generation from strings/i.test(
      message,
    )
  )
    return "refused";
  if (name === "EvalError") return "refused";
  if (/Maximum call stack|out of memory|Invalid array length|Array buffer allocation failed/i.test(message)) {
    return /out of memory|allocation failed|Invalid array length/i.test(message) ? "memory" : "error";
  }
  return "error";
}

/** A thrown value described without trusting it (a hostile getter may throw). */
function describeThrown(e: unknown): { name: string; message: string } {
  try {
    if (typeof e === "object" && e !== null) {
      const o = e as { name?: unknown; message?: unknown };
      const text = (v: unknown, otherwise: string): string =>
        typeof v === "string" ? v : typeof v === "number" ? String(v) : otherwise;
      return { name: text(o.name, "Error"), message: text(o.message, "") };
    }
    return { name: "Thrown", message: String(e) };
  } catch {
    return { name: "Error", message: "an exception that cannot be described" };
  }
}

const JS_DEFINITION =
  /(?:^|[\n;])\s*(?:export\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*\(|(?:^|[\n;])\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function\b|\(|[A-Za-z_$][\w$]*\s*=>)/;

/** The first function the code defines at top level (declaration or const/let/var = function or arrow). */
export function firstJsFunction(code: string): string | null {
  const m = JS_DEFINITION.exec(code);
  return m ? (m[1] ?? m[2] ?? null) : null;
}

const verdict = (
  status: SandboxStatus,
  passed: number,
  total: number,
  detail: string,
  t0: number,
): SandboxVerdict => ({ status, passed, total, detail, durationMs: Math.round(performance.now() - t0) });

const shortJson = (v: unknown): string => {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 80 ? `${s.slice(0, 79)}…` : s;
};

/** JSON values equal, numbers within a relative 1e-6 (float answers such as km / 1.609). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (typeof a === "number" && typeof b === "number")
    return a === b || Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(a), Math.abs(b));
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  if (a && b && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b)) {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    return (
      ka.join("\u0000") === kb.join("\u0000") &&
      ka.every((k) => sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
    );
  }
  return a === b;
}

/** Compare the calls' outcomes with what each expects; the verdict of a run that got this far. */
function judgeCalls(
  calls: readonly SandboxCall[],
  outcomes: readonly Outcome[],
  entry: string,
  extra: { total: number; failure: SandboxVerdict | null },
  t0: number,
  classify: (name: string, message: string) => SandboxStatus,
): SandboxVerdict {
  const total = calls.length + extra.total;
  let passed = 0;
  for (const [i, call] of calls.entries()) {
    const o = outcomes[i]!;
    const shownCall = `${entry}(${call.args.map((a) => shortJson(a)).join(", ")})`;
    if (!o.ok) {
      return verdict(
        classify(o.name, o.message),
        passed,
        total,
        `${shownCall} raised ${o.name}: ${o.message}`,
        t0,
      );
    }
    if (!sameValue(o.value, call.expect))
      return verdict(
        "failed",
        passed,
        total,
        `${shownCall} returned ${shortJson(o.value)}, expected ${shortJson(call.expect)}`,
        t0,
      );
    passed++;
  }
  if (extra.failure) return { ...extra.failure, passed: passed + extra.failure.passed, total };
  return verdict("passed", passed + extra.total, total, `${passed + extra.total} of ${total} tests pass`, t0);
}

// ---------------------------------------------------------------- JavaScript

const inContext = (expr: string): string =>
  `(() => { try { const v = (${expr}); ` +
  `if (v !== null && (typeof v === "object" || typeof v === "function") && typeof v.then === "function") { ` +
  `v.then(undefined, () => undefined); ` +
  `return JSON.stringify({ ok: false, name: "TypeError", message: "returned a Promise, not a value" }); } ` +
  `return JSON.stringify({ ok: true, value: v === undefined ? null : v }); } ` +
  `catch (e) { let n = "Error", m = ""; try { n = String(e && e.name); m = String(e && e.message); } catch {} ` +
  `return JSON.stringify({ ok: false, name: n, message: m }); } })()`;

/** Modules are not for sandboxed code: `import x from …` and `import(…)` are refused up front. */
const JS_IMPORT = /(^|[^\w$.])import\s*\(|^\s*import[\s{*"']/m;

function runJs(req: SandboxRequest, timeoutMs: number): SandboxVerdict {
  const t0 = performance.now();
  const deadline = t0 + timeoutMs;
  const left = (): number => Math.max(1, Math.floor(deadline - performance.now()));
  const total = req.calls.length + (req.testCode ? 1 : 0);
  for (const source of [req.code, req.testCode ?? ""])
    if (JS_IMPORT.test(source))
      return verdict("refused", 0, total, "the code imports a module: not allowed in the sandbox", t0);
  // A null-prototype sandbox: `this.constructor` inside is the context's own Object, not ours.
  const context = vm.createContext(Object.create(null) as object, {
    codeGeneration: { strings: false, wasm: false },
    microtaskMode: "afterEvaluate",
  });
  const run = (source: string, filename: string): unknown =>
    new vm.Script(source, { filename }).runInContext(context, { timeout: left(), breakOnSigint: false });
  try {
    run(req.code, "answer.js");
  } catch (e) {
    const { name, message } = describeThrown(e);
    if (/Script execution timed out/.test(message))
      return verdict("timeout", 0, total, `the code ran past ${timeoutMs} ms`, t0);
    return verdict(classifyJsError(name, message), 0, total, `the code raised ${name}: ${message}`, t0);
  }
  const entry = req.entry ?? firstJsFunction(req.code);
  if (req.calls.length > 0) {
    if (!entry) return verdict("error", 0, total, "the code defines no function to test", t0);
    if (run(`typeof ${entry} === "function"`, "check.js") !== true)
      return verdict("error", 0, total, `${entry} is not a function`, t0);
  }
  const outcomes: Outcome[] = [];
  for (const call of req.calls) {
    let text: unknown;
    try {
      text = run(
        inContext(`${entry}(...JSON.parse(${JSON.stringify(JSON.stringify(call.args))}))`),
        "test.js",
      );
    } catch (e) {
      const { message } = describeThrown(e);
      if (/Script execution timed out/.test(message))
        return verdict("timeout", outcomes.length, total, `${entry}(…) ran past ${timeoutMs} ms`, t0);
      return verdict("error", outcomes.length, total, message, t0);
    }
    outcomes.push(
      typeof text === "string"
        ? (JSON.parse(text) as Outcome)
        : { ok: false, name: "Error", message: "no result" },
    );
  }
  let failure: SandboxVerdict | null = null;
  if (req.testCode) {
    try {
      const text = run(inContext(`(() => { ${req.testCode}\n })()`), "tests.js");
      const o = typeof text === "string" ? (JSON.parse(text) as Outcome) : null;
      if (o && !o.ok) {
        const status = o.name === "AssertionError" ? "failed" : classifyJsError(o.name, o.message);
        failure = verdict(status, 0, 0, `the tests raised ${o.name}: ${o.message}`, t0);
      }
    } catch (e) {
      const { message } = describeThrown(e);
      failure = /Script execution timed out/.test(message)
        ? verdict("timeout", 0, 0, `the tests ran past ${timeoutMs} ms`, t0)
        : verdict("error", 0, 0, message, t0);
    }
  }
  return judgeCalls(
    req.calls,
    outcomes,
    entry ?? "?",
    { total: req.testCode ? 1 : 0, failure },
    t0,
    classifyJsError,
  );
}

// ---------------------------------------------------------------- Python

/**
 * The Python side of a run, defined once in the interpreter. `__sandbox_run` takes the request
 * as JSON and returns a JSON object: per call {ok, value} or {ok: False, name, message}, or a
 * top-level error. Each run gets a fresh namespace whose __builtins__ is a copy with the
 * dangerous entries replaced, so nothing a run changes outlives it.
 */
const PY_RUNNER = String.raw`
import ast as _ast, builtins as _builtins, json as _json, sys as _sys
# Imported before the guard so that their own imports (random needs os) keep working.
import math, re, string, random, collections, itertools, functools, operator, statistics, heapq, bisect, fractions, decimal, datetime, textwrap, unicodedata, copy, typing, dataclasses, enum

_BLOCKED = {"os", "posix", "nt", "sys", "io", "_io", "subprocess", "socket", "_socket", "ssl", "select", "selectors",
  "shutil", "pathlib", "glob", "tempfile", "ctypes", "_ctypes", "js", "pyodide", "pyodide_js", "_pyodide",
  "pyodide_http", "micropip", "importlib", "builtins", "signal", "threading", "_thread", "multiprocessing",
  "asyncio", "urllib", "http", "ftplib", "smtplib", "webbrowser", "pickle", "marshal", "gc", "inspect",
  "code", "codeop", "runpy", "zipimport", "pkgutil", "platform", "resource", "mmap", "fcntl", "pty", "atexit",
  "faulthandler", "sysconfig", "site", "emscripten"}

class SandboxRefusal(Exception):
    pass

_real_import = _builtins.__import__

def _guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0 and name.split(".")[0] in _BLOCKED:
        raise SandboxRefusal("import of " + name + " is not allowed in the sandbox")
    return _real_import(name, globals, locals, fromlist, level)

def _refuse(what):
    def refused(*args, **kwargs):
        raise SandboxRefusal(what + " is not allowed in the sandbox")
    return refused

def _safe_builtins():
    b = dict(_builtins.__dict__)
    b["__import__"] = _guarded_import
    for name in ("open", "input", "breakpoint", "help"):
        b[name] = _refuse(name + "()")
    for name in ("exit", "quit", "copyright", "credits", "license"):
        b.pop(name, None)
    b["SandboxRefusal"] = SandboxRefusal
    return b

def _describe(e):
    if isinstance(e, SandboxRefusal):
        return {"ok": False, "name": "SandboxRefusal", "message": str(e)}
    if isinstance(e, (SystemExit, KeyboardInterrupt)):
        return {"ok": False, "name": "SandboxRefusal", "message": type(e).__name__ + ": the code tried to exit"}
    try:
        return {"ok": False, "name": type(e).__name__, "message": str(e)[:300]}
    except BaseException:
        return {"ok": False, "name": "Exception", "message": "an exception that cannot be described"}

def _plain(v):
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (set, frozenset)):
        return sorted((_plain(x) for x in v), key=repr)
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise TypeError("returned a " + type(v).__name__ + ", not a JSON value")

def __sandbox_run(request_json):
    request = _json.loads(request_json)
    code = request["code"]
    try:
        tree = _ast.parse(code, "answer.py")
    except BaseException as e:
        return _json.dumps({"error": _describe(e)})
    entry = request.get("entry")
    if entry is None:
        for node in tree.body:
            if isinstance(node, (_ast.FunctionDef, _ast.AsyncFunctionDef)):
                entry = node.name
                break
    ns = {"__name__": "__sandbox__", "__builtins__": _safe_builtins()}
    try:
        exec(compile(tree, "answer.py", "exec"), ns)
    except BaseException as e:
        return _json.dumps({"error": _describe(e), "entry": entry})
    calls = request["calls"]
    if calls and (entry is None or not callable(ns.get(entry))):
        return _json.dumps({"error": {"ok": False, "name": "NoFunction", "message": "the code defines no function to test" if entry is None else entry + " is not a function"}, "entry": entry})
    outcomes = []
    for call in calls:
        try:
            outcomes.append({"ok": True, "value": _plain(ns[entry](*call["args"]))})
        except BaseException as e:
            outcomes.append(_describe(e))
    tests = None
    if request.get("testCode"):
        try:
            exec(compile(request["testCode"], "tests.py", "exec"), ns)
            tests = {"ok": True, "value": None}
        except BaseException as e:
            tests = _describe(e)
    return _json.dumps({"entry": entry, "outcomes": outcomes, "tests": tests}, allow_nan=True)
`;

interface PyResult {
  error?: { name: string; message: string };
  entry?: string | null;
  outcomes?: Outcome[];
  tests?: Outcome | null;
}

function classifyPyError(name: string, message: string): SandboxStatus {
  if (name === "SandboxRefusal") return "refused";
  // A size past what 32-bit WebAssembly can address ("cannot fit 'int' into an index-sized
  // integer") is a memory request too, refused before any allocation.
  if (name === "MemoryError" || (name === "OverflowError" && /memory|too large|index-sized/i.test(message)))
    return "memory";
  return "error";
}

interface Python {
  runPython(code: string): unknown;
  globals: { get(name: string): unknown };
}

let python: Promise<Python> | null = null;

/** The part of pyodide's API used here. */
type LoadPyodide = (options: Record<string, unknown>) => Promise<unknown>;

/**
 * Imported by name at run time, never bundled: Pyodide finds its WebAssembly and standard
 * library files next to its own module in node_modules.
 */
const PYODIDE_MODULE = "pyodide";

async function loadPython(): Promise<Python> {
  const { loadPyodide } = (await import(PYODIDE_MODULE)) as { loadPyodide: LoadPyodide };
  const py = (await loadPyodide({
    // `import js` sees this empty object, not this process's globals.
    jsglobals: Object.create(null) as object,
    stdout: () => undefined,
    stderr: () => undefined,
    stdin: () => null,
    fullStdLib: false,
  })) as Python;
  py.runPython(PY_RUNNER);
  return py;
}

async function runPython(req: SandboxRequest, startClock: () => void): Promise<SandboxVerdict> {
  python ??= loadPython();
  let py: Python;
  try {
    py = await python;
  } catch (e) {
    python = null;
    return verdict(
      "crashed",
      0,
      req.calls.length,
      `Python did not start: ${describeThrown(e).message}`,
      performance.now(),
    );
  }
  startClock();
  const t0 = performance.now();
  const total = req.calls.length + (req.testCode ? 1 : 0);
  const run = py.globals.get("__sandbox_run") as (json: string) => string;
  const result = JSON.parse(
    run(
      JSON.stringify({ code: req.code, entry: req.entry, calls: req.calls, testCode: req.testCode ?? null }),
    ),
  ) as PyResult;
  if (result.error) {
    const { name, message } = result.error;
    const status = name === "NoFunction" ? "error" : classifyPyError(name, message);
    return verdict(
      status,
      0,
      total,
      name === "NoFunction" ? message : `the code raised ${name}: ${message}`,
      t0,
    );
  }
  let failure: SandboxVerdict | null = null;
  const tests = result.tests;
  if (tests && !tests.ok) {
    const status = tests.name === "AssertionError" ? "failed" : classifyPyError(tests.name, tests.message);
    failure = verdict(status, 0, 0, `the tests raised ${tests.name}: ${tests.message || "(no message)"}`, t0);
  }
  return judgeCalls(
    req.calls,
    result.outcomes ?? [],
    result.entry ?? "?",
    { total: req.testCode ? 1 : 0, failure },
    t0,
    classifyPyError,
  );
}

// ---------------------------------------------------------------- messages

let queue: Promise<void> = Promise.resolve();

port?.onMessage((message) => {
  const parsed = parseToChild(message);
  if (!parsed.ok) {
    // Core's bug, not the answer's: a request that names its id still gets a verdict, so that
    // nobody waits for one; one without an id cannot be answered and is only logged.
    process.stderr.write(`[sandbox] a malformed request was dropped: ${parsed.problem}\n`);
    const { id } = parsed;
    if (id !== undefined)
      send({
        type: "verdict",
        id,
        verdict: verdict(
          "crashed",
          0,
          0,
          `the sandbox could not read the request: ${parsed.problem}`,
          performance.now(),
        ),
      });
    return;
  }
  const m = parsed.message;
  queue = queue.then(async () => {
    const started = (): void => send({ type: "running", id: m.id });
    let v: SandboxVerdict;
    try {
      if (m.request.language === "js") {
        started();
        v = runJs(m.request, m.timeoutMs);
      } else v = await runPython(m.request, started);
    } catch (e) {
      const { name, message } = describeThrown(e);
      v = verdict(
        "crashed",
        0,
        m.request.calls.length,
        `the sandbox failed: ${name}: ${message}`,
        performance.now(),
      );
    }
    send({ type: "verdict", id: m.id, verdict: v });
  });
});
port?.onDisconnect(() => process.exit(0));
// A promise the code left rejected (e.g. a refused dynamic import) must not end the sandbox.
process.on("unhandledRejection", () => undefined);
