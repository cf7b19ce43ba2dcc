/**
 * The engine process's environment: the caller's, plus, when MACARON_ENGINE_HUGEPAGES=1 on
 * Linux, glibc's `glibc.malloc.hugetlb=1`, so that the large buffers llama.cpp allocates (the KV
 * cache, compute buffers, weights repacked for the CPU kernels: each a malloc'd mmap chunk) are
 * marked MADV_HUGEPAGE and get transparent huge pages where the kernel's THP mode is `madvise`
 * (Debian's and Ubuntu's default; under `always` they get them anyway, under `never` the
 * tunable changes nothing).
 *
 * Off by default since 2026-12-05. It was on: on the slower 2-core VM of 2026-12-02 generation
 * was ~9% faster with it, and two processes running the same code stayed within ~2% of each
 * other (without it the one that loaded first was 5–8% slower: the physical layout of 4 KiB
 * pages, each TLB miss a two-level walk in a VM). On this machine it gives 1.01× (`npm run
 * bench -- direct-ab --compare hugepages`), and generation at 4 and 8 clients is within the
 * runs' noise either way, while first touching huge pages costs the start: in a VM each 2 MiB
 * page the guest faults in may have to be backed by the host, so creating the context took
 * 0.55–1.0 s instead of ~0.2 s, and spawn → first token was 1.95–2.6× llama-server's instead of
 * 1.33–1.45× (bench/README.md, "parallel").
 *
 * The tunable is read once by the dynamic loader at process start, so it must be in the
 * environment the engine is started with. A GLIBC_TUNABLES that already sets it is left alone.
 * musl and other platforms ignore it, so it is only added on Linux.
 */
import { switchedOn } from "../../../common/env-switch";

const TUNABLE = "glibc.malloc.hugetlb";

export function engineEnv(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): NodeJS.ProcessEnv {
  if (platform !== "linux") return env;
  if (!switchedOn(env.MACARON_ENGINE_HUGEPAGES)) return env;
  const tunables = env.GLIBC_TUNABLES ?? "";
  if (tunables.split(":").some((t) => t.split("=")[0] === TUNABLE)) return env;
  return { ...env, GLIBC_TUNABLES: tunables ? `${tunables}:${TUNABLE}=1` : `${TUNABLE}=1` };
}
