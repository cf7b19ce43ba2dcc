/**
 * The app's changes to llama.cpp, applied (git apply) to node-llama-cpp's clone of its bundled
 * source before the local build compiles it (native-build.ts). Each is part of the build's cache
 * key (native-cache.ts), so a changed patch is another build.
 *
 * kv-cache-lazy-zero: llama.cpp writes zeros over every KV buffer it creates (cells never written
 * are read under the attention mask, and garbage there could be NaN), which makes the process
 * touch every page of every sequence's cells at once: 288 MiB for one sequence of 8,192 cells of
 * the bench model, 1.15 GB for four. On Linux a CPU buffer is private anonymous memory
 * (ggml_aligned_malloc), and `madvise(MADV_DONTNEED)` gives it zero-fill-on-demand pages instead,
 * touched as cells are used. Measured with node-llama-cpp alone on the bench model (8,192 cells
 * per sequence, 4 KiB pages, pinned to one core, two alternations with the unpatched build):
 * creating the one-sequence context 38–47 ms instead of 824–932 ms, the four-sequence one
 * 20–23 ms instead of 3.8–4.1 s, RSS after four 64-token answers 513–519 MiB instead of
 * 1,503–1,510 MiB; the same answers (the engine tests pass unchanged on it). Other
 * buffers (GPU, host-pinned), other systems and the prebuilt binaries (no local build) clear as
 * before.
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
index a342ee1..995f411 100644
--- a/src/llama-kv-cache.cpp
+++ b/src/llama-kv-cache.cpp
@@ -14,6 +14,37 @@
 #include <stdexcept>
 #include <unordered_map>
 
+#if defined(__linux__)
+#include <sys/mman.h>
+#include <unistd.h>
+#endif
+
+// Macaron: a new KV buffer must read as zeros (cells that were never written are read under the
+// attention mask, and garbage there could be NaN). On Linux a buffer of the CPU buffer type is
+// private anonymous memory (ggml_aligned_malloc), which MADV_DONTNEED turns into zero-fill-on-
+// demand pages: the pages are then touched only as cells are used, instead of every page being
+// written at creation. Any other buffer, or a refused madvise, is cleared as before.
+static void llama_kv_cache_clear_new_buffer(ggml_backend_buffer_t buf) {
+#if defined(__linux__)
+    if (ggml_backend_buffer_is_host(buf) && strcmp(ggml_backend_buffer_name(buf), "CPU") == 0) {
+        const long page_size = sysconf(_SC_PAGESIZE);
+        uint8_t * base = (uint8_t *) ggml_backend_buffer_get_base(buf);
+        const size_t size = ggml_backend_buffer_get_size(buf);
+        if (page_size > 0 && base != nullptr && size >= 4 * (size_t) page_size) {
+            const uintptr_t page = (uintptr_t) page_size;
+            uint8_t * first = (uint8_t *) (((uintptr_t) base + page - 1) & ~(page - 1));
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
 }
@@ -290,7 +321,7 @@ llama_kv_cache::llama_kv_cache(
 
         LLAMA_LOG_INFO("%s: %10s KV buffer size = %8.2f MiB\n", __func__, ggml_backend_buffer_name(buf), ggml_backend_buffer_get_size(buf)/1024.0/1024.0);
 
-        ggml_backend_buffer_clear(buf, 0);
+        llama_kv_cache_clear_new_buffer(buf);
         ctxs_bufs.emplace_back(std::move(ctx), buf);
     }
 
`,
  },
];

/** What the patches change, for the build's cache key. */
export function llamaPatchesKey(patches: readonly LlamaPatch[] = LLAMA_PATCHES): string {
  const hash = createHash("sha256");
  for (const patch of patches) hash.update(patch.name).update("\0").update(patch.diff).update("\0");
  return hash.digest("hex");
}

/** `git apply` one diff (from stdin) in `dir`; rejects with git's message when it does not apply. */
function gitApply(dir: string, diff: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const git = spawn("git", ["apply", "--whitespace=nowarn", "-"], { cwd: dir, stdio: "pipe" });
    let output = "";
    git.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    git.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    git.once("error", reject);
    // git closing its input early (it refused the patch) is reported by its exit code.
    git.stdin.on("error", () => undefined);
    git.once("close", (code) =>
      code === 0 ? resolve() : reject(new Error(output.trim() || `git apply exited with ${String(code)}`)),
    );
    git.stdin.end(diff);
  });
}

/** Apply every patch to the llama.cpp source in `dir`, in order; the first that fails rejects. */
export async function applyLlamaPatches(
  dir: string,
  patches: readonly LlamaPatch[] = LLAMA_PATCHES,
): Promise<void> {
  for (const patch of patches) {
    try {
      await gitApply(dir, patch.diff);
    } catch (err) {
      throw new Error(`the app's llama.cpp patch "${patch.name}" does not apply: ${(err as Error).message}`);
    }
  }
}
