import { readdir, readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EngineSupervisor } from "../../electron/core/engine/supervisor";
import { spawnNodeEngine } from "../../electron/core/engine/spawn-node";
import { affinityEnabled, allowedCpus, engineCpus, parseCpuList, pinEngineThreads } from "./affinity";
import { engineThreads } from "./llama-backend";
import { ensureFixtureModel } from "../gguf/fixtures";
import { suiteDir } from "../../testing/core/temp-dir";

describe("cpu lists", () => {
  it("reads the kernel's ranges and single CPUs, in order", () => {
    expect(parseCpuList("0-1")).toEqual([0, 1]);
    expect(parseCpuList("0,2-4,7\n")).toEqual([0, 2, 3, 4, 7]);
    expect(parseCpuList("5")).toEqual([5]);
    expect(() => parseCpuList("0-a")).toThrow(/not a cpu list/);
  });

  it("finds Cpus_allowed_list in a status file, null without one", () => {
    expect(allowedCpus("Name:\tnode\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n")).toEqual([0, 1]);
    expect(allowedCpus("Name:\tnode\n")).toBeNull();
    expect(allowedCpus(null)).toBeNull();
  });
});

describe("engineCpus", () => {
  it("keeps the compute threads on the last CPUs, leaving the first ones to the app", () => {
    expect(engineCpus(1, [0, 1])).toEqual([1]);
    expect(engineCpus(7, [0, 1, 2, 3, 4, 5, 6, 7])).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(engineCpus(2, [0, 4, 6, 9])).toEqual([6, 9]);
  });

  it("changes nothing when the threads take every CPU (or more)", () => {
    expect(engineCpus(2, [0, 1])).toBeNull();
    expect(engineCpus(4, [0, 1])).toBeNull();
    expect(engineCpus(1, [3])).toBeNull();
  });
});

describe("pinEngineThreads", () => {
  it("is off with MACARON_ENGINE_AFFINITY=0, and on other platforms", () => {
    for (const off of ["0", "off", "false", "NO"]) {
      expect(affinityEnabled({ MACARON_ENGINE_AFFINITY: off })).toBe(false);
      expect(pinEngineThreads(1, { MACARON_ENGINE_AFFINITY: off }, "linux")).toEqual({
        pinned: null,
        reason: "off",
      });
    }
    expect(affinityEnabled({})).toBe(true);
    expect(pinEngineThreads(1, {}, "darwin")).toEqual({ pinned: null, reason: "not-linux" });
    expect(pinEngineThreads(1, {}, "win32")).toEqual({ pinned: null, reason: "not-linux" });
  });
});

/** Each thread's allowed CPUs, as the kernel reports them. */
async function threadCpus(pid: number): Promise<number[][]> {
  const tasks = await readdir(`/proc/${pid}/task`);
  return Promise.all(
    tasks.map(async (tid) => allowedCpus(await readFile(`/proc/${pid}/task/${tid}/status`, "utf8"))!),
  );
}

// The real engine process: every one of its threads (V8's, libuv's, llama.cpp's after a load)
// on the compute threads' CPUs, or on all of them when switched off.
describe.runIf(process.platform === "linux")("the engine process's threads", () => {
  const engines: EngineSupervisor[] = [];
  const dir = suiteDir("macaron-affinity-");
  let model: string;

  beforeAll(async () => {
    model = await ensureFixtureModel(dir.path);
  });

  afterAll(async () => {
    await Promise.all(engines.map((e) => e.close()));
  });

  const started = async (env: NodeJS.ProcessEnv) => {
    const engine = new EngineSupervisor(spawnNodeEngine({ env }));
    engines.push(engine);
    // With a model loaded: llama.cpp's and libuv's threads exist too.
    await engine.load(model, () => {});
    return threadCpus(engine.pid!);
  };

  it("stay on the compute threads' CPUs by default, on every allowed CPU when switched off", async () => {
    const allowed = allowedCpus()!;
    const threads = engineThreads(process.env);
    // On explicitly: the unit-test config turns it off for the other engine tests (vitest.config.ts).
    const on = await started({ ...process.env, MACARON_ENGINE_AFFINITY: "1" });
    const off = await started({ ...process.env, MACARON_ENGINE_AFFINITY: "0" });
    expect(on.length).toBeGreaterThan(1);
    for (const cpus of on) expect(cpus).toEqual(engineCpus(threads, allowed) ?? allowed);
    for (const cpus of off) expect(cpus).toEqual(allowed);
  }, 60_000);
});
