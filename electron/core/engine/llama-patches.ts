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
 *
 * Addon patches (ADDON_PATCHES) change node-llama-cpp's own native addon, which the build compiles
 * from its package folder (llama/addon), not from the clone: they are applied there for the build
 * and taken back out after it (the package's files are left as npm installed them).
 *
 * sequence-embeddings: the addon reads the pooled embedding of sequence 0 only, so node-llama-cpp
 * embeds one text per decode. getSequenceEmbedding(sequenceId, outputIndex) reads any sequence's,
 * which lets native/engine/embedder.ts put many texts, each on its own sequence, in one decode;
 * and an embedding context's sequences share one pool of KV cells (kv_unified), without which
 * llama.cpp splits a batch of texts of different lengths into equal-length parts and pools each
 * sequence's last part only. The prebuilt binaries have neither: the embedder then embeds one
 * text at a time, as before.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { dirname } from "node:path";

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

/** Patches to node-llama-cpp's addon sources, relative to its package's llama/ folder. */
export const ADDON_PATCHES: readonly LlamaPatch[] = [
  {
    name: "sequence-embeddings",
    diff: String.raw`diff --git a/addon/AddonContext.cpp b/addon/AddonContext.cpp
index 18138ab..7d839e0 100644
--- a/addon/AddonContext.cpp
+++ b/addon/AddonContext.cpp
@@ -389,6 +389,14 @@ AddonContext::AddonContext(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Ad
             context_params.embeddings = options.Get("embeddings").As<Napi::Boolean>().Value();
         }
 
+        // Macaron: an embedding context's sequences share one pool of cells (a unified KV cache),
+        // so a batch of whole inputs of different lengths is decoded as one ubatch. With a cache
+        // per sequence llama.cpp splits such a batch into equal-length parts, and each pooled
+        // embedding would be that of its sequence's last part. One sequence: the same either way.
+        if (context_params.embeddings) {
+            context_params.kv_unified = true;
+        }
+
         if (options.Has("ranking") && options.Get("ranking").As<Napi::Boolean>().Value()) {
             context_params.pooling_type = LLAMA_POOLING_TYPE_RANK;
         }
@@ -724,6 +732,56 @@ Napi::Value AddonContext::SampleToken(const Napi::CallbackInfo& info) {
     return worker->GetPromise();
 }
 
+// Macaron: the embedding of one sequence of the last decoded batch (getEmbedding reads sequence 0
+// only), so that one decode can embed several inputs, each on its own sequence: the sequence's
+// pooled embedding, or for a model without pooling the output at batch index outputIndex (the
+// sequence's last token, as addToBatch returned it).
+Napi::Value AddonContext::GetSequenceEmbedding(const Napi::CallbackInfo& info) {
+    if (disposed) {
+        Napi::Error::New(info.Env(), "Context is disposed").ThrowAsJavaScriptException();
+        return info.Env().Undefined();
+    }
+
+    if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsNumber()) {
+        Napi::TypeError::New(info.Env(), "Expected a sequence id and an output index").ThrowAsJavaScriptException();
+        return info.Env().Undefined();
+    }
+
+    const int32_t sequenceId = info[0].As<Napi::Number>().Int32Value();
+    const int32_t outputIndex = info[1].As<Napi::Number>().Int32Value();
+
+    if (sequenceId < 0 || static_cast<uint32_t>(sequenceId) >= llama_n_seq_max(ctx) || outputIndex < 0) {
+        Napi::RangeError::New(info.Env(), "Invalid sequence id or output index").ThrowAsJavaScriptException();
+        return info.Env().Undefined();
+    }
+
+    const enum llama_pooling_type pooling_type = llama_pooling_type(ctx);
+    const int64_t n_embd = pooling_type == LLAMA_POOLING_TYPE_RANK
+        ? static_cast<int64_t>(llama_model_n_cls_out(model->model))
+        : llama_model_n_embd_out(model->model);
+
+    if (n_embd <= 0) {
+        Napi::Error::New(info.Env(), "Invalid embedding vector size").ThrowAsJavaScriptException();
+        return info.Env().Undefined();
+    }
+
+    const auto* embeddings = pooling_type == LLAMA_POOLING_TYPE_NONE
+        ? llama_get_embeddings_ith(ctx, outputIndex)
+        : llama_get_embeddings_seq(ctx, sequenceId);
+
+    if (embeddings == NULL) {
+        Napi::Error::New(info.Env(), std::string("No embedding for sequence ") + std::to_string(sequenceId)).ThrowAsJavaScriptException();
+        return info.Env().Undefined();
+    }
+
+    Napi::Float64Array result = Napi::Float64Array::New(info.Env(), n_embd);
+    for (int64_t i = 0; i < n_embd; i++) {
+        result[i] = embeddings[i];
+    }
+
+    return result;
+}
+
 Napi::Value AddonContext::GetEmbedding(const Napi::CallbackInfo& info) {
     if (disposed) {
         Napi::Error::New(info.Env(), "Context is disposed").ThrowAsJavaScriptException();
@@ -1176,6 +1234,7 @@ void AddonContext::init(Napi::Object exports) {
                 InstanceMethod("decodeBatch", &AddonContext::DecodeBatch),
                 InstanceMethod("sampleToken", &AddonContext::SampleToken),
                 InstanceMethod("getEmbedding", &AddonContext::GetEmbedding),
+                InstanceMethod("getSequenceEmbedding", &AddonContext::GetSequenceEmbedding),
                 InstanceMethod("getStateSize", &AddonContext::GetStateSize),
                 InstanceMethod("getMemoryBreakdown", &AddonContext::GetMemoryBreakdown),
                 InstanceMethod("getThreads", &AddonContext::GetThreads),
diff --git a/addon/AddonContext.h b/addon/AddonContext.h
index daa4029..fed3f37 100644
--- a/addon/AddonContext.h
+++ b/addon/AddonContext.h
@@ -50,6 +50,7 @@ class AddonContext : public Napi::ObjectWrap<AddonContext> {
         Napi::Value SampleToken(const Napi::CallbackInfo& info);
 
         Napi::Value GetEmbedding(const Napi::CallbackInfo& info);
+        Napi::Value GetSequenceEmbedding(const Napi::CallbackInfo& info);
         Napi::Value GetStateSize(const Napi::CallbackInfo& info);
         Napi::Value GetMemoryBreakdown(const Napi::CallbackInfo& info);
         Napi::Value GetThreads(const Napi::CallbackInfo& info);
`,
  },
];

/** What the patches change, for the build's cache key. */
export function llamaPatchesKey(
  patches: readonly LlamaPatch[] = [...LLAMA_PATCHES, ...ADDON_PATCHES],
): string {
  const hash = createHash("sha256");
  for (const patch of patches) hash.update(patch.name).update("\0").update(patch.diff).update("\0");
  return hash.digest("hex");
}

/**
 * `git apply` one diff (from stdin) in `dir`: its output, or a rejection with it when it does not
 * apply. `flags`: `-R` takes it back out, `--check` only asks. git looks for no repository above
 * `dir` (GIT_CEILING_DIRECTORIES): the package folder may sit in someone's work tree.
 */
function gitApply(dir: string, diff: string, env: NodeJS.ProcessEnv, flags: string[] = []): Promise<string> {
  return new Promise((resolve, reject) => {
    const git = spawn("git", ["apply", "--whitespace=nowarn", ...flags, "-"], {
      cwd: dir,
      env: { ...env, GIT_CEILING_DIRECTORIES: dirname(dir) },
      stdio: "pipe",
    });
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

/**
 * Apply the addon patches to node-llama-cpp's llama/ folder (`llamaDir`) for a build; resolves
 * to the function that takes them back out, which the build calls when it ends, however it ends.
 * A patch found already applied (a build killed before it could take it out) is kept and taken
 * out with the others. The first that does not apply rejects, after the ones before it are
 * taken back out.
 */
export async function applyAddonPatches(
  llamaDir: string,
  options: ApplyOptions = {},
): Promise<() => Promise<void>> {
  const env = options.env ?? process.env;
  const applied: LlamaPatch[] = [];
  const restore = async () => {
    for (const patch of applied.splice(0).reverse()) await gitApply(llamaDir, patch.diff, env, ["-R"]);
  };
  for (const patch of options.patches ?? ADDON_PATCHES) {
    const already = await gitApply(llamaDir, patch.diff, env, ["-R", "--check"]).then(
      () => true,
      () => false,
    );
    try {
      if (!already) {
        const output = await gitApply(llamaDir, patch.diff, env);
        for (const line of output.split("\n")) if (line.trim() !== "") options.onLine?.(line);
      }
      applied.push(patch);
    } catch (err) {
      await restore();
      throw new Error(`the app's addon patch "${patch.name}" does not apply: ${(err as Error).message}`);
    }
  }
  return restore;
}
