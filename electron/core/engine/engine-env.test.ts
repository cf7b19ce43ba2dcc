import { readFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureFixtureModel } from "../../../native/gguf/fixtures";
import { engineEnv } from "./engine-env";
import { spawnNodeEngine } from "./spawn-node";
import { EngineSupervisor } from "./supervisor";

describe("engineEnv", () => {
  it("adds glibc's hugetlb tunable on Linux, keeping the rest of the environment", () => {
    const env = engineEnv({ PATH: "/bin", MACARON_ENGINE_THREADS: "2" }, "linux");
    expect(env).toEqual({
      PATH: "/bin",
      MACARON_ENGINE_THREADS: "2",
      GLIBC_TUNABLES: "glibc.malloc.hugetlb=1",
    });
  });

  it("appends to tunables already set, and leaves one that sets hugetlb itself alone", () => {
    expect(engineEnv({ GLIBC_TUNABLES: "glibc.malloc.arena_max=2" }, "linux").GLIBC_TUNABLES).toBe(
      "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1",
    );
    const own = { GLIBC_TUNABLES: "glibc.malloc.hugetlb=0:glibc.malloc.arena_max=2" };
    expect(engineEnv(own, "linux")).toBe(own);
  });

  it("is off with MACARON_ENGINE_HUGEPAGES=0 and on other platforms", () => {
    for (const off of ["0", "off", "false", "NO"]) {
      const env = { MACARON_ENGINE_HUGEPAGES: off };
      expect(engineEnv(env, "linux")).toBe(env);
    }
    const env = { PATH: "/bin" };
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

// A real engine process (node-llama-cpp on the generated tiny model) with and without the
// tunable: what the kernel reports for its memory, not what we set.
describe.runIf(process.platform === "linux")("the engine process's huge pages", () => {
  let dir: string;
  let model: string;
  const engines: EngineSupervisor[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "macaron-hugepages-"));
    model = await ensureFixtureModel(dir);
  });

  afterAll(async () => {
    await Promise.all(engines.map((e) => e.close()));
    await rm(dir, { recursive: true, force: true });
  });

  const loaded = async (env: NodeJS.ProcessEnv): Promise<number> => {
    const engine = new EngineSupervisor(spawnNodeEngine({ env }));
    engines.push(engine);
    await engine.load(model, () => {});
    return anonHugeKiB(engine.pid!);
  };

  it("llama.cpp's buffers get huge pages by default where the kernel allows them, none when switched off", async () => {
    const mode = await thpMode();
    const withTunable = await loaded({ ...process.env });
    const without = await loaded({ ...process.env, MACARON_ENGINE_HUGEPAGES: "0" });
    if (mode === "never") {
      expect([withTunable, without]).toEqual([0, 0]);
    } else {
      // The context's KV cache alone is tens of MiB: several 2 MiB pages.
      expect(withTunable).toBeGreaterThanOrEqual(4096);
      if (mode === "madvise") expect(without).toBe(0);
    }
  }, 120_000);
});
