/**
 * The app's llama.cpp patches against the source node-llama-cpp bundles (its git bundle, cloned
 * with git as its own download does): each applies, in order, and leaves what it says; applied a
 * second time the first one refuses, by name; the addon patches apply to a copy of the installed
 * package's addon sources and come back out to the same bytes. A node-llama-cpp upgrade whose
 * source no longer takes a patch fails here, not in a user's build.
 */
import { execFileSync } from "node:child_process";
import { cpSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { testDir } from "../../../testing/core/temp-dir";
import {
  ADDON_PATCHES,
  LLAMA_PATCHES,
  applyAddonPatches,
  applyLlamaPatches,
  llamaPatchesKey,
} from "./llama-patches";
import { nodeLlamaCppDir } from "./native-build";

it("each patch applies to the bundled llama.cpp source and refuses a second time", async () => {
  const source = join(testDir("macaron-llama-patches-"), "llama.cpp");
  execFileSync("git", ["clone", "--quiet", join(nodeLlamaCppDir(), "llama", "gitRelease.bundle"), source]);
  await applyLlamaPatches(source);
  const kvCache = readFileSync(join(source, "src", "llama-kv-cache.cpp"), "utf8");
  expect(kvCache).toContain("madvise(first, (size_t) (last - first), MADV_DONTNEED)");
  // The KV buffer is no longer written over at creation; a clear asked for later (clear(true)) still is.
  expect(kvCache).toContain("llama_kv_cache_clear_new_buffer(buf);");
  expect(kvCache.match(/ggml_backend_buffer_clear\(buf\.get\(\), 0\)/g)).toHaveLength(1);
  // Weights read into memory are advised huge pages before they are read in (load_all_data).
  const model = readFileSync(join(source, "src", "llama-model.cpp"), "utf8");
  expect(model).toContain("madvise((void *) first, last - first, MADV_HUGEPAGE)");
  expect(model.indexOf("llama_model_advise_huge_pages(buf);")).toBeLessThan(
    model.indexOf("ml.load_all_data("),
  );
  await expect(applyLlamaPatches(source)).rejects.toThrow(
    `the app's llama.cpp patch "${LLAMA_PATCHES[0]!.name}" does not apply`,
  );
});

it("the cache key changes with a patch's text", () => {
  const changed = LLAMA_PATCHES.map((p, i) => (i === 0 ? { ...p, diff: `${p.diff}\n` } : p));
  expect(llamaPatchesKey(changed)).not.toBe(llamaPatchesKey());
  expect(llamaPatchesKey([...LLAMA_PATCHES, ...ADDON_PATCHES])).toBe(llamaPatchesKey());
});

it("the addon patches apply to node-llama-cpp's addon sources and come back out", async () => {
  const llamaDir = join(testDir("macaron-addon-patches-"), "llama");
  cpSync(join(nodeLlamaCppDir(), "llama", "addon"), join(llamaDir, "addon"), { recursive: true });
  const files = () =>
    Object.fromEntries(
      readdirSync(join(llamaDir, "addon"), { recursive: true, encoding: "utf8" })
        .filter((f) => /\.(cpp|h)$/.test(f))
        .map((f) => [f, readFileSync(join(llamaDir, "addon", f), "utf8")]),
    );
  // The copy as npm installed it (a build running beside this test has the package patched):
  // applied if it was not, then taken out.
  await (
    await applyAddonPatches(llamaDir)
  )();
  const before = files();
  expect(before["AddonContext.cpp"]).not.toContain("getSequenceEmbedding");
  const restore = await applyAddonPatches(llamaDir);
  const context = readFileSync(join(llamaDir, "addon", "AddonContext.cpp"), "utf8");
  expect(context).toContain('InstanceMethod("getSequenceEmbedding", &AddonContext::GetSequenceEmbedding)');
  expect(context).toContain("llama_get_embeddings_seq(ctx, sequenceId)");
  expect(context).toMatch(/if \(context_params\.embeddings\) \{\s+context_params\.kv_unified = true;/);
  await restore();
  expect(files()).toEqual(before);
  // Found applied (a build killed before it took them out): kept, and taken out once.
  await applyAddonPatches(llamaDir);
  const again = await applyAddonPatches(llamaDir);
  await again();
  expect(files()).toEqual(before);
  // A patch that does not apply is named.
  await expect(
    applyAddonPatches(llamaDir, {
      patches: [{ ...ADDON_PATCHES[0]!, diff: ADDON_PATCHES[0]!.diff.replace(/GetEmbedding/g, "Nope") }],
    }),
  ).rejects.toThrow(`the app's addon patch "${ADDON_PATCHES[0]!.name}" does not apply`);
  expect(files()).toEqual(before);
});

it("the cache key changes with an addon patch's text", () => {
  const changed = ADDON_PATCHES.map((p) => ({ ...p, diff: `${p.diff}\n` }));
  expect(llamaPatchesKey([...LLAMA_PATCHES, ...changed])).not.toBe(llamaPatchesKey());
});
