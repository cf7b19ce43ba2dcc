/**
 * The engine process's environment: the caller's, plus glibc's `glibc.malloc.hugetlb=1` on
 * Linux, so that the large buffers llama.cpp allocates (weights repacked for the CPU kernels,
 * the KV cache, compute buffers: each a malloc'd mmap chunk) are marked MADV_HUGEPAGE and get
 * transparent huge pages where the kernel's THP mode is `madvise` (Debian's and Ubuntu's
 * default; under `always` they get them anyway, under `never` the tunable changes nothing).
 *
 * Why: with 4 KiB pages every weight read during generation risks a TLB miss, and inside a
 * virtual machine each miss is a two-level page walk. Measured on the 2-core VM (bench model,
 * 64 tokens, the same node-llama-cpp code in two processes, alternating): without the tunable
 * the process that loaded the model first generated 5–8% slower than the other, whichever it
 * was (the physical layout of its pages), which was most of why `/v1` looked 0.83–0.93× of
 * node-llama-cpp direct; with it the two processes are within ~2% of each other and generation
 * is ~9% faster (`npm run bench -- direct-ab --compare hugepages`, bench/README.md).
 *
 * The tunable is read once by the dynamic loader at process start, so it must be in the
 * environment the engine is started with. A GLIBC_TUNABLES that already sets it is left alone;
 * MACARON_ENGINE_HUGEPAGES=0 turns it off (benchmarks compare both). musl and other platforms
 * ignore it, so it is only added on Linux.
 */
import { switchedOff } from "../../../common/env-switch";

const TUNABLE = "glibc.malloc.hugetlb";

export function engineEnv(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): NodeJS.ProcessEnv {
  if (platform !== "linux") return env;
  if (switchedOff(env.MACARON_ENGINE_HUGEPAGES)) return env;
  const tunables = env.GLIBC_TUNABLES ?? "";
  if (tunables.split(":").some((t) => t.split("=")[0] === TUNABLE)) return env;
  return { ...env, GLIBC_TUNABLES: tunables ? `${tunables}:${TUNABLE}=1` : `${TUNABLE}=1` };
}
