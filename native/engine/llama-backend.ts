import os from "node:os";
import { getLlama, type Llama } from "node-llama-cpp";
import type { KvCacheType, LoadOptions, MachineMemory } from "../../common/engine-protocol";
import { switchedOff, switchedOn } from "../../common/env-switch";

/**
 * Compute threads for llama.cpp. One core is left to the JS thread: on 2 cores, 1 compute
 * thread generates faster than 2 (ARCHITECTURE.md: 74 vs 49 tok/s) because they compete.
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

/**
 * Flash attention for the contexts. On CPU it is off: with the KV cache reused, a turn
 * evaluates a few dozen new tokens against thousands of cached ones, and there llama.cpp's CPU
 * flash-attention kernel is ~1.8× slower than the plain one (turn 50 of a chat: 441 vs 223 ms
 * TTFT on the ~99M bench model; `npm run bench -- memory`), while it only wins on long prompts
 * evaluated from scratch (~1.4×), which the saved states make rare. On a GPU llama.cpp decides.
 * `MACARON_FLASH_ATTENTION=on|off|auto` overrides it (benchmarks compare both).
 */
export function flashAttentionFor(
  gpu: string | null,
  env: NodeJS.ProcessEnv = process.env,
): boolean | "auto" {
  switch (env.MACARON_FLASH_ATTENTION) {
    case "on":
      return true;
    case "off":
      return false;
    case "auto":
      return "auto";
    default:
      return gpu === null ? false : "auto";
  }
}

/**
 * Flash attention for one load: "on"/"off" as asked; "auto" (or nothing) is the engine's
 * default above (off on CPU). A quantized V cache needs flash attention in llama.cpp, so with
 * "auto" and a q8_0/q4_0 KV cache it is on (see kvCacheTypes for an explicit "off").
 */
export function resolveFlashAttention(
  setting: LoadOptions["flashAttention"],
  kvCacheType: KvCacheType,
  gpu: string | null,
  env: NodeJS.ProcessEnv = process.env,
): boolean | "auto" {
  if (setting === "on") return true;
  if (setting === "off") return false;
  const engineDefault = flashAttentionFor(gpu, env);
  return kvCacheType !== "f16" && engineDefault === false ? true : engineDefault;
}

type GgmlTypeName = "F16" | "Q8_0" | "Q4_0";
const GGML_TYPE: Record<KvCacheType, GgmlTypeName> = { f16: "F16", q8_0: "Q8_0", q4_0: "Q4_0" };

/**
 * node-llama-cpp's key/value cache types for a KV cache setting. Without flash attention
 * llama.cpp refuses a quantized V cache, so then only the keys are quantized.
 */
export function kvCacheTypes(
  kvCacheType: KvCacheType,
  flashAttention: boolean | "auto",
): { key: GgmlTypeName; value: GgmlTypeName } {
  const key = GGML_TYPE[kvCacheType];
  return { key, value: flashAttention === false ? "F16" : key };
}

/** RAM and VRAM on this machine as node-llama-cpp sees them (VRAM 0 without a GPU). */
export async function machineMemory(llama: Llama, gpu: string | null): Promise<MachineMemory> {
  const vram = gpu === null ? { total: 0, free: 0 } : await llama.getVramState();
  let gpuName: string | null = null;
  if (gpu !== null) {
    const names = await llama.getGpuDeviceNames().catch(() => [] as string[]);
    gpuName = names.length > 0 ? `${gpu}: ${names.join(", ")}` : gpu;
  }
  return {
    ramTotalBytes: os.totalmem(),
    ramFreeBytes: os.freemem(),
    vramTotalBytes: vram.total,
    vramFreeBytes: vram.free,
    gpu: gpuName,
    cpuCores: os.availableParallelism(),
  };
}

/**
 * The share of the free memory (less MACARON_ENGINE_RAM_RESERVE_MB) a model's weights may take to
 * be read into memory (see weightsInMemory): the rest is left to its KV cells, the app and the
 * machine.
 */
export const IN_MEMORY_SHARE = 0.25;

/**
 * The most weights read into memory: reading in costs the load ~1.5–2 s per GB on the 2-core VM
 * of the measurements below (a copy of the file), where a mapped model starts at once.
 */
export const IN_MEMORY_MAX_BYTES = 4 * 1024 ** 3;

/**
 * Whether the engine reads the weights into memory instead of mapping the model's file
 * (node-llama-cpp's `useMmap: false`). On the CPU every decode reads every weight, and read from
 * the file's pages (the page cache, mapped) generation was slower than from the process's own
 * memory, on the bench model's F16 weights: node-llama-cpp alone, 4 sequences, three
 * alternations, 86–97 tok/s mapped against 96–125 read in; the engine's way of generating,
 * one sequence, `npm run bench -- direct-ab --compare mmap --size bench` 1.196×; llama-server
 * built from the same source gains as much from `--no-mmap` (bench/README.md, "parallel"). Where
 * llama.cpp repacks weights for the CPU (most quantized types on AVX2 or ARM) those are in the
 * process's memory either way, so the switch matters for what is left (the bench model as
 * Q4_K_M: the same load time, generation as fast or faster, less RSS; ARCHITECTURE.md). Reading in costs the load
 * a copy of the file (0.3–0.4 s for the bench model's 198 MB with the app's weights-huge-pages
 * patch) and memory the page cache would otherwise share, so it is done only on the CPU (a GPU
 * holds its layers itself; there node-llama-cpp decides) and for weights that take at most
 * IN_MEMORY_SHARE of the free memory and IN_MEMORY_MAX_BYTES; a bigger model stays mapped, where
 * the system can page it instead of running short. `weightBytes` covers every part of a split
 * model (fit-estimate.ts). `MACARON_ENGINE_MMAP=on` always maps (and so never advises huge pages
 * for the weights), `=off` always reads in.
 */
export function weightsInMemory(
  gpu: string | null,
  weightBytes: number,
  freeBytes: number,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  if (switchedOn(env.MACARON_ENGINE_MMAP)) return false;
  if (switchedOff(env.MACARON_ENGINE_MMAP)) return true;
  const available = freeBytes - (ramReserveBytes(env) ?? 0);
  return (
    gpu === null &&
    weightBytes > 0 &&
    weightBytes <= IN_MEMORY_MAX_BYTES &&
    weightBytes <= available * IN_MEMORY_SHARE
  );
}

/**
 * RAM the engine leaves to the rest of the machine, from `MACARON_ENGINE_RAM_RESERVE_MB` (a
 * positive integer): a model or context that would need it is refused with "Not enough memory"
 * instead of pushing the machine into swap. Unset: node-llama-cpp's own padding.
 */
export function ramReserveBytes(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const mb = Number(env.MACARON_ENGINE_RAM_RESERVE_MB ?? "");
  return Number.isSafeInteger(mb) && mb > 0 ? mb * 1024 * 1024 : undefined;
}

export interface LlamaBackend {
  llama: Llama;
  /** "cuda" | "vulkan" | "metal", or null on CPU. */
  gpu: string | null;
  threads: number;
  /** For every context this backend creates (see flashAttentionFor). */
  flashAttention: boolean | "auto";
}

/**
 * Load llama.cpp once per process: GPU auto-detected, and the CPU build when a GPU build is
 * present but fails to load (driver mismatch, missing libraries).
 */
export async function loadLlamaBackend(threads: number, env = process.env): Promise<LlamaBackend> {
  const ramPadding = ramReserveBytes(env);
  const options = { maxThreads: threads, ...(ramPadding === undefined ? {} : { ramPadding }) };
  let llama: Llama;
  try {
    llama = await getLlama({ gpu: "auto", ...options });
  } catch (gpuError) {
    process.stderr.write(`[engine] GPU backend failed to load, using CPU: ${String(gpuError)}\n`);
    llama = await getLlama({ gpu: false, ...options });
  }
  const gpu = llama.gpu === false ? null : llama.gpu;
  return { llama, gpu, threads, flashAttention: flashAttentionFor(gpu) };
}
