import { fork, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveEngineEntry } from "../../electron/core/engine/spawn-node";
import type { EngineMessage } from "../../common/engine-protocol";

// The engine entry as a real child process, spoken to over the raw protocol.
let child: ChildProcess;
const messages: EngineMessage[] = [];
const waiters: { match: (m: EngineMessage) => boolean; resolve: (m: EngineMessage) => void }[] = [];

function next(match: (m: EngineMessage) => boolean): Promise<EngineMessage> {
  const seen = messages.find(match);
  if (seen) return Promise.resolve(seen);
  return new Promise((resolve) => waiters.push({ match, resolve }));
}

const reply = (id: number) =>
  next((m) => "id" in m && m.id === id && (m.type === "result" || m.type === "error"));

beforeAll(() => {
  const entry = resolveEngineEntry(new URL("../../electron/core/engine/spawn-node.ts", import.meta.url).href);
  child = fork(entry.path, [], {
    execArgv: entry.execArgv,
    stdio: ["ignore", "ignore", "inherit", "ipc"],
    serialization: "advanced",
  });
  child.on("message", (m: EngineMessage) => {
    messages.push(m);
    for (const waiter of waiters.filter((w) => w.match(m))) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(m);
    }
  });
});

afterAll(() => {
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

describe("engine process (native/engine/main.ts)", () => {
  it("says ready with its pid first", async () => {
    expect(await next((m) => m.type === "ready")).toEqual({ type: "ready", pid: child.pid });
    expect(messages[0]?.type).toBe("ready");
  });

  it("answers bad requests with invalid_request and keeps running", async () => {
    child.send({ id: 7, type: "generate", history: "nope" });
    const error = await reply(7);
    expect(error).toMatchObject({ type: "error", code: "invalid_request" });
    expect(error.type === "error" && error.message).toMatch(/history/);
    child.send({ id: 8, type: "ping" });
    expect(await reply(8)).toEqual({ type: "result", id: 8, value: { pid: child.pid } });
  });

  it("answers a tool schema the grammar cannot express with invalid_request, naming where", async () => {
    child.send({
      id: 20,
      type: "generate",
      history: [{ role: "user", text: "hi" }],
      options: {
        temperature: 0,
        maxTokens: 3,
        tools: [{ name: "t", parameters: { type: "object", properties: { a: { not: {} } } } }],
      },
    });
    const error = await reply(20);
    expect(error).toMatchObject({ type: "error", code: "invalid_request" });
    expect(error.type === "error" && error.message).toMatch(/tools\.t\.parameters\.properties\.a uses "not"/);
    child.send({ id: 21, type: "ping" });
    expect(await reply(21)).toEqual({ type: "result", id: 21, value: { pid: child.pid } });
  });

  it("answers no_model to a generate before any load, and ignores aborts of nothing", async () => {
    child.send({
      id: 9,
      type: "generate",
      history: [{ role: "user", text: "hi" }],
      options: { temperature: 0, maxTokens: 3 },
    });
    expect(await reply(9)).toMatchObject({ type: "error", code: "no_model" });
    child.send({ id: 10, type: "abort", target: 9 });
    expect(await reply(10)).toEqual({ type: "result", id: 10, value: { aborted: false } });
    child.send({ id: 11, type: "embed", texts: ["hello"] });
    expect(await reply(11)).toMatchObject({ type: "error", code: "no_model" });
  });

  it("exits when its parent disconnects, so no engine outlives the app", async () => {
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.disconnect();
    expect(await exited).toBe(0);
  });
});
