import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureFixtureModel } from "../../../native/gguf/fixtures";
import { engineEnv } from "./engine-env";
import { spawnNodeEngine } from "./spawn-node";
import { EngineSupervisor } from "./supervisor";
import { suiteDir } from "../../../testing/core/temp-dir";

const ON = { MACARON_ENGINE_HUGEPAGES: "1" };

describe("engineEnv", () => {
  it("with MACARON_ENGINE_HUGEPAGES=1, adds glibc's hugetlb tunable on Linux, keeping the rest", () => {
    const env = engineEnv({ PATH: "/bin", MACARON_ENGINE_THREADS: "2", ...ON }, "linux");
    expect(env).toEqual({
      PATH: "/bin",
      MACARON_ENGINE_THREADS: "2",
      ...ON,
      GLIBC_TUNABLES: "glibc.malloc.hugetlb=1",
    });
  });

  it("appends to tunables already set, and leaves one that sets hugetlb itself alone", () => {
    expect(engineEnv({ GLIBC_TUNABLES: "glibc.malloc.arena_max=2", ...ON }, "linux").GLIBC_TUNABLES).toBe(
      "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1",
    );
    const own = { GLIBC_TUNABLES: "glibc.malloc.hugetlb=0:glibc.malloc.arena_max=2", ...ON };
    expect(engineEnv(own, "linux")).toBe(own);
  });

  it("is off by default, with MACARON_ENGINE_HUGEPAGES=0, and on other platforms", () => {
    for (const off of [undefined, "0", "off", "false", "NO"]) {
      const env = { MACARON_ENGINE_HUGEPAGES: off };
      expect(engineEnv(env, "linux")).toBe(env);
    }
    expect(engineEnv({ MACARON_ENGINE_HUGEPAGES: "On" }, "linux").GLIBC_TUNABLES).toBe(
      "glibc.malloc.hugetlb=1",
    );
    const env = { PATH: "/bin", ...ON };
    expect(engineEnv(env, "darwin")).toBe(env);
    expect(engineEnv(env, "win32")).toBe(env);
  });
});

/** The kernel's THP mode: the bracketed word of /sys/kernel/mm/transparent_hugepage/enabled. */
async function thpMode(): Promise<string> {
  const text = await readFile("/sys/kernel/mm/transparent_hugepage/enabled", "utf8").catch(() => "[never]");
  return /\[(\w+)\]/.exec(text)?.[1] ?? "never";
}

async function anonHugeKiB(pid: number): Promise<number> {
  const rollup = await readFile(`/proc/${pid}/smaps_rollup`, "utf8");
  return Number(/^AnonHugePages:\s+(\d+) kB/m.exec(rollup)?.[1] ?? NaN);
}

/**
 * KiB of the process's mappings marked MADV_HUGEPAGE (`hg` in smaps' VmFlags): what the tunable
 * makes glibc ask for. Whether the kernel then backs them with huge pages at once depends on
 * free, unfragmented memory (a busy CI machine gave one 2 MiB page where a quiet one gives
 * dozens), so the advice is what is asserted; the pages it got are only bounded from above.
 */
async function hugeAdvisedKiB(pid: number): Promise<number> {
  const smaps = await readFile(`/proc/${pid}/smaps`, "utf8");
  let total = 0;
  let size = 0;
  for (const line of smaps.split("\n")) {
    const sized = /^Size:\s+(\d+) kB/.exec(line);
    if (sized) size = Number(sized[1]);
    else if (line.startsWith("VmFlags:") && line.split(/\s+/).includes("hg")) total += size;
  }
  return total;
}

// A real engine process (node-llama-cpp on the generated tiny model) with and without the
// tunable: what the kernel reports for its memory, not what we set.
describe.runIf(process.platform === "linux")("the engine process's huge pages", () => {
  const dir = suiteDir("macaron-hugepages-");
  let model: string;
  const engines: EngineSupervisor[] = [];

  beforeAll(async () => {
    model = await ensureFixtureModel(dir.path);
  });

  afterAll(async () => {
    await Promise.all(engines.map((e) => e.close()));
  });

  const loaded = async (env: NodeJS.ProcessEnv) => {
    const engine = new EngineSupervisor(spawnNodeEngine({ env }));
    engines.push(engine);
    await engine.load(model, () => {});
    const pid = engine.pid!;
    return { advised: await hugeAdvisedKiB(pid), huge: await anonHugeKiB(pid) };
  };

  it("llama.cpp's buffers are advised onto huge pages when switched on, none by default", async () => {
    const mode = await thpMode();
    const on = await loaded({ ...process.env, ...ON });
    const off = await loaded({ ...process.env, MACARON_ENGINE_HUGEPAGES: undefined });
    // The model's repacked weights and the context's KV cache: tens of MiB asked for.
    expect(on.advised).toBeGreaterThanOrEqual(16 * 1024);
    expect(off.advised).toBe(0);
    // Huge pages only ever back advised memory (or all of it under `always`), none under `never`.
    expect(on.huge).toBeLessThanOrEqual(mode === "always" ? Infinity : on.advised);
    if (mode !== "always") expect(off.huge).toBe(0);
    if (mode === "never") expect(on.huge).toBe(0);
  }, 120_000);
});
