import os from "node:os";
import { getLlama, type Llama } from "node-llama-cpp";

/**
 * Compute threads for llama.cpp. One core is left to the JS thread: on 2 cores, 1 compute
 * thread generates faster than 2 (FACTS.md: 74 vs 49 tok/s) because they compete.
 * `MACARON_ENGINE_THREADS` overrides it (a user setting passed down by core).
 */
export function engineThreads(
  env: NodeJS.ProcessEnv = process.env,
  cores = os.availableParallelism(),
): number {
  const override = Number.parseInt(env.MACARON_ENGINE_THREADS ?? "", 10);
  if (Number.isInteger(override) && override > 0) return override;
  return Math.max(1, cores - 1);
}

export interface LlamaBackend {
  llama: Llama;
  /** "cuda" | "vulkan" | "metal", or null on CPU. */
  gpu: string | null;
  threads: number;
}

/**
 * Load llama.cpp once per process: GPU auto-detected, and the CPU build when a GPU build is
 * present but fails to load (driver mismatch, missing libraries).
 */
export async function loadLlamaBackend(threads: number): Promise<LlamaBackend> {
  let llama: Llama;
  try {
    llama = await getLlama({ gpu: "auto", maxThreads: threads });
  } catch (gpuError) {
    process.stderr.write(`[engine] GPU backend failed to load, using CPU: ${String(gpuError)}\n`);
    llama = await getLlama({ gpu: false, maxThreads: threads });
  }
  return { llama, gpu: llama.gpu === false ? null : llama.gpu, threads };
}
