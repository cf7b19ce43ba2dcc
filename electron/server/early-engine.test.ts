import { describe, expect, it } from "vitest";
import type { EngineProcess } from "../core/engine/types";
import { earlyEngine } from "./early-engine";

/** A process whose messages and exit the test triggers. */
function fakeProcess(pid: number) {
  const messageListeners: ((m: unknown) => void)[] = [];
  const exitListeners: ((code: number | null, signal: string | null) => void)[] = [];
  const sent: unknown[] = [];
  let killed = false;
  const proc: EngineProcess = {
    send: (m) => void sent.push(m),
    onMessage: (l) => void messageListeners.push(l),
    onExit: (l) => void exitListeners.push(l),
    kill: () => void (killed = true),
    pid,
  };
  return {
    proc,
    sent,
    killed: () => killed,
    say: (m: unknown) => messageListeners.forEach((l) => l(m)),
    exit: (code: number) => exitListeners.forEach((l) => l(code, null)),
  };
}

function spawner() {
  const spawned: ReturnType<typeof fakeProcess>[] = [];
  const spawn = () => {
    const p = fakeProcess(spawned.length + 1);
    spawned.push(p);
    return p.proc;
  };
  return { spawned, spawn };
}

describe("earlyEngine", () => {
  it("forks at once and replays what the process said before anyone listened", () => {
    const { spawned, spawn } = spawner();
    const early = earlyEngine(spawn);
    expect(spawned).toHaveLength(1);
    spawned[0]!.say({ type: "ready", pid: 1 });
    spawned[0]!.say({ type: "log" });
    const proc = early.spawnEngine();
    const heard: unknown[] = [];
    proc.onMessage((m) => heard.push(m));
    spawned[0]!.say({ type: "later" });
    expect(heard).toEqual([{ type: "ready", pid: 1 }, { type: "log" }, { type: "later" }]);
    proc.send({ type: "load" });
    expect(spawned[0]!.sent).toEqual([{ type: "load" }]);
    expect(proc.pid).toBe(1);
  });

  it("replays an early exit, and spawns fresh processes after the first (restarts)", () => {
    const { spawned, spawn } = spawner();
    const early = earlyEngine(spawn);
    spawned[0]!.exit(3);
    const first = early.spawnEngine();
    const exits: (number | null)[] = [];
    first.onExit((code) => exits.push(code));
    expect(exits).toEqual([3]);
    const second = early.spawnEngine();
    expect(spawned).toHaveLength(2);
    expect(second).toBe(spawned[1]!.proc);
    early.dispose();
    expect(spawned.map((p) => p.killed())).toEqual([false, false]);
  });

  it("kills the early process when nobody took it; a later spawn forks a new one", () => {
    const { spawned, spawn } = spawner();
    const early = earlyEngine(spawn);
    early.dispose();
    expect(spawned[0]!.killed()).toBe(true);
    early.spawnEngine();
    expect(spawned).toHaveLength(2);
  });
});
