import { spawnNodeEngine } from "../../electron/core/engine/spawn-node";

/**
 * The real engine process (node-llama-cpp) for tests and benchmarks, with one compute thread:
 * on these 2-core machines more threads make generation slower (ARCHITECTURE.md). `env` adds to it.
 */
export function spawnTestEngine(env: NodeJS.ProcessEnv = {}): ReturnType<typeof spawnNodeEngine> {
  return spawnNodeEngine({ env: { ...process.env, MACARON_ENGINE_THREADS: "1", ...env } });
}
