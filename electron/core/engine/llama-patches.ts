/**
 * The app's changes to llama.cpp, applied (git apply) to node-llama-cpp's clone of its bundled
 * source before the local build compiles it (native-build.ts). Each is part of the build's cache
 * key (native-cache.ts), so a changed patch is another build.
 *
 * kv-cache-lazy-zero: llama.cpp writes zeros over every KV buffer it creates (cells never written
 * are read under the attention mask, and garbage there could be NaN), which makes the process
 * touch every page of every sequence's cells at once: 288 MiB for one sequence of 8,192 cells of
 * the bench model, 1.15 GB for four. On Linux a buffer of the CPU buffer type is what
 * posix_memalign returned (ggml_aligned_malloc), private anonymous memory, and
 * `madvise(MADV_DONTNEED)` gives it zero-fill-on-demand pages instead, touched as cells are used
 * (the partial first and last pages are still written; a hugetlb-backed heap is refused by the
 * kernel and cleared as before). Measured with node-llama-cpp alone on the bench model (8,192 cells
 * per sequence, 4 KiB pages, pinned to one core, two alternations with the unpatched build):
 * creating the one-sequence context 38–47 ms instead of 824–932 ms, the four-sequence one
 * 20–23 ms instead of 3.8–4.1 s, RSS after four 64-token answers 513–519 MiB instead of
 * 1,503–1,510 MiB; the same answers (the engine tests pass unchanged on it). Other
 * buffers (GPU, host-pinned), other systems and the prebuilt binaries (no local build) clear as
 * before.
 *
 * weights-huge-pages: weights read into memory (the engine's CPU loads without mmap, see
 * native/engine/llama-backend.ts, weightsInMemory) go into a buffer of the CPU buffer type, which
 * gets `madvise(MADV_HUGEPAGE)` on its 2 MiB-aligned interior before the weights are read in, so
 * transparent huge pages back it where the system offers them on request (Linux's default
 * "madvise" mode). Reading the bench model's 198 MB in took 296–382 ms with it and 606–768 ms
 * without (three alternations, THP switched off for the "without"): a fault per 2 MiB instead
 * of per 4 KiB. Generation speed was the same within the noise. A mapped model, other buffers
 * and other systems are untouched.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";

export interface LlamaPatch {
  name: string;
  diff: string;
}

export const LLAMA_PATCHES: readonly LlamaPatch[] = [
  {
    name: "kv-cache-lazy-zero",
    diff: String.raw`diff --git a/src/llama-kv-cache.cpp b/src/llama-kv-cache.cpp
index a342ee1..fe58e30 100644
--- a/src/llama-kv-cache.cpp
+++ b/src/llama-kv-cache.cpp
@@ -13,6 +13,44 @@
 #include <map>
 #include <stdexcept>
 #include <unordered_map>
+#if defined(__linux__)
+#include <sys/mman.h>
+#include <unistd.h>
+#endif
+
+// Macaron: a new KV buffer must read as zeros (cells that were never written are read under the
+// attention mask, and garbage there could be NaN). On Linux a buffer of the CPU buffer type is
+// what posix_memalign returned (ggml_aligned_malloc): private anonymous memory, which
+// MADV_DONTNEED turns into zero-fill-on-demand pages, so its pages are touched only as cells are
+// used instead of all being written at creation. A range starting on a 2 MiB boundary is moved
+// on by a page, so that a hugetlb-backed heap (where MADV_DONTNEED would round the end down and
+// still succeed) is refused (EINVAL) and cleared instead. Any other buffer, or a refused madvise,
+// is cleared as before. The buffer's base is the start the CPU clear uses (ggml_aligned_malloc
+// aligns to 64, at least TENSOR_ALIGNMENT).
+static void llama_kv_cache_clear_new_buffer(ggml_backend_buffer_t buf) {
+#if defined(__linux__)
+    if (ggml_backend_buffer_is_host(buf) && strcmp(ggml_backend_buffer_name(buf), "CPU") == 0) {
+        const long page_size = sysconf(_SC_PAGESIZE);
+        uint8_t * base = (uint8_t *) ggml_backend_buffer_get_base(buf);
+        const size_t size = ggml_backend_buffer_get_size(buf);
+        if (page_size > 0 && base != nullptr && size >= 4 * (size_t) page_size) {
+            const uintptr_t page = (uintptr_t) page_size;
+            uint8_t * first = (uint8_t *) (((uintptr_t) base + page - 1) & ~(page - 1));
+            if (((uintptr_t) first & ((uintptr_t) (2u << 20) - 1)) == 0) {
+                first += page;
+            }
+            uint8_t * last  = (uint8_t *) (((uintptr_t) base + size) & ~(page - 1));
+            if (last > first && madvise(first, (size_t) (last - first), MADV_DONTNEED) == 0) {
+                memset(base, 0, (size_t) (first - base));
+                memset(last, 0, (size_t) (base + size - last));
+                return;
+            }
+        }
+    }
+#endif
+    ggml_backend_buffer_clear(buf, 0);
+}
+
 
 static bool ggml_is_power_of_2(int n) {
     return (n & (n - 1)) == 0;
@@ -290,7 +328,7 @@ llama_kv_cache::llama_kv_cache(
 
         LLAMA_LOG_INFO("%s: %10s KV buffer size = %8.2f MiB\n", __func__, ggml_backend_buffer_name(buf), ggml_backend_buffer_get_size(buf)/1024.0/1024.0);
 
-        ggml_backend_buffer_clear(buf, 0);
+        llama_kv_cache_clear_new_buffer(buf);
         ctxs_bufs.emplace_back(std::move(ctx), buf);
     }
 
`,
  },
  {
    name: "weights-huge-pages",
    diff: String.raw`diff --git a/src/llama-model.cpp b/src/llama-model.cpp
index 9e2e0c8..c37b429 100644
--- a/src/llama-model.cpp
+++ b/src/llama-model.cpp
@@ -40,6 +40,32 @@
 #include <string>
 #include <vector>
 
+#if defined(__linux__)
+#include <sys/mman.h>
+#endif
+
+// Macaron: weights read into a buffer of the CPU buffer type (no mmap) get transparent huge
+// pages where the system offers them on request (madvise mode). Each decode reads every weight,
+// and with 4 KiB pages that is a TLB miss per 4 KiB. The advice covers the 2 MiB-aligned interior
+// of the buffer, before the weights are read into it; a refused madvise changes nothing.
+static void llama_model_advise_huge_pages(ggml_backend_buffer_t buf) {
+#if defined(__linux__) && defined(MADV_HUGEPAGE)
+    if (!ggml_backend_buffer_is_host(buf) || strcmp(ggml_backend_buffer_name(buf), "CPU") != 0) {
+        return;
+    }
+    const uintptr_t huge = 2u << 20;
+    const uintptr_t base = (uintptr_t) ggml_backend_buffer_get_base(buf);
+    const uintptr_t end = base + ggml_backend_buffer_get_size(buf);
+    const uintptr_t first = (base + huge - 1) & ~(huge - 1);
+    const uintptr_t last = end & ~(huge - 1);
+    if (base != 0 && last > first) {
+        madvise((void *) first, last - first, MADV_HUGEPAGE);
+    }
+#else
+    (void) buf;
+#endif
+}
+
 static llama_model * llama_model_mapping(llm_arch arch, const llama_model_params & params) {
     switch (arch) {
         case LLM_ARCH_CLIP:
@@ -1761,6 +1787,9 @@ bool llama_model_base::load_tensors(llama_model_loader & ml) {
             if (buf == nullptr) {
                 throw std::runtime_error(format("unable to allocate %s buffer", ggml_backend_buft_name(buft)));
             }
+            if (!ml.no_alloc) {
+                llama_model_advise_huge_pages(buf);
+            }
             if (use_mlock && ggml_backend_buffer_is_host(buf)) {
                 pimpl->mlock_bufs.emplace_back(new llama_mlock);
                 auto & mlock_buf = pimpl->mlock_bufs.back();
`,
  },
];

/** What the patches change, for the build's cache key. */
export function llamaPatchesKey(patches: readonly LlamaPatch[] = LLAMA_PATCHES): string {
  const hash = createHash("sha256");
  for (const patch of patches) hash.update(patch.name).update("\0").update(patch.diff).update("\0");
  return hash.digest("hex");
}

/** `git apply` one diff (from stdin) in `dir`: its output, or a rejection with it when it does not apply. */
function gitApply(dir: string, diff: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const git = spawn("git", ["apply", "--whitespace=nowarn", "-"], { cwd: dir, env, stdio: "pipe" });
    let output = "";
    git.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    git.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    git.once("error", reject);
    // git closing its input early (it refused the patch) is reported by its exit code.
    git.stdin.on("error", () => undefined);
    git.once("close", (code) =>
      code === 0
        ? resolve(output.trim())
        : reject(new Error(output.trim() || `git apply exited with ${String(code)}`)),
    );
    git.stdin.end(diff);
  });
}

export interface ApplyOptions {
  /** git's environment: the build's (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** git's output, line by line (the build's log). */
  onLine?: (line: string) => void;
  patches?: readonly LlamaPatch[];
}

/** Apply every patch to the llama.cpp source in `dir`, in order; the first that fails rejects. */
export async function applyLlamaPatches(dir: string, options: ApplyOptions = {}): Promise<void> {
  for (const patch of options.patches ?? LLAMA_PATCHES) {
    try {
      const output = await gitApply(dir, patch.diff, options.env ?? process.env);
      for (const line of output.split("\n")) if (line.trim() !== "") options.onLine?.(line);
    } catch (err) {
      throw new Error(`the app's llama.cpp patch "${patch.name}" does not apply: ${(err as Error).message}`);
    }
  }
}
