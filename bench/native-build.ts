/**
 * Prebuilt vs built for this machine: builds llama.cpp with the app's own build code
 * (electron/core/engine/native-build.ts) into a COPY of node-llama-cpp under
 * node_modules/.macaron-native-build, so the app's node-llama-cpp (and every other test and
 * process on the machine) keeps whatever it runs; then measures prompt and generation tok/s on
 * the ~99M bench model, prebuilt and local build interleaved (A/B, B/A, …), same prompt, warm;
 * then deletes the copies (`--keep` leaves them for another run). The prebuilt side is a second
 * copy without any local build (node_modules/.macaron-native-build-prebuilt), not the app's
 * package: `npm run setup` builds llama.cpp into that one, and getLlama() prefers a local build.
 *
 *   npm run bench -- native-build [--runs 5] [--threads 1]
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { writeFixtures } from "../native/gguf/fixtures";
import { hasLocalBuild, NativeBuild } from "../electron/core/engine/native-build";
import { copyNodeLlamaCpp } from "../testing/engine/node-llama-cpp-copy";
import { median, report, type BenchRow } from "./stats";

const COPY_FOLDER = ".macaron-native-build";
const COPY_ROOT = resolve(import.meta.dirname, "..", "node_modules", COPY_FOLDER);
const COPY = join(COPY_ROOT, "node_modules", "node-llama-cpp");
const PREBUILT_FOLDER = ".macaron-native-build-prebuilt";

interface Speed {
  buildType: string;
  promptTokPerS: number;
  genTokPerS: number;
}

function speed(packageDir: string, model: string, threads: number): Speed {
  const tsx = createRequire(import.meta.url).resolve("tsx");
  const out = execFileSync(
    process.execPath,
    [
      "--import",
      tsx,
      join(import.meta.dirname, "llama-speed.ts"),
      packageDir,
      model,
      String(threads),
      "512",
      "128",
      "3",
    ],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
  );
  return JSON.parse(out.trim().split("\n").at(-1)!) as Speed;
}

export async function benchNativeBuild(options: {
  runs: number;
  threads: number;
  keep: boolean;
}): Promise<void> {
  const prebuiltCopy = copyNodeLlamaCpp(PREBUILT_FOLDER, { source: false });
  const dir = mkdtempSync(join(tmpdir(), "macaron-bench-native-"));
  let buildSeconds = NaN;
  try {
    const model = (await writeFixtures(dir, { size: "bench" })).basePath;
    if (!(existsSync(COPY) && hasLocalBuild(COPY))) {
      copyNodeLlamaCpp(COPY_FOLDER);
      let shown = -1;
      const build = new NativeBuild({
        packageDir: COPY,
        engineInfo: null,
        relaunch: null,
        emit: (b) => {
          const pct = Math.floor((b.progress ?? 0) * 10);
          if (pct !== shown) {
            shown = pct;
            console.log(`build ${b.state} ${Math.round((b.progress ?? 0) * 100)}%  ${b.log.at(-1) ?? ""}`);
          }
        },
      });
      const started = performance.now();
      await build.build();
      await build.done;
      buildSeconds = (performance.now() - started) / 1000;
      const status = await build.status();
      if (status.state !== "built")
        throw new Error(`the build failed: ${status.error}\n${status.log.join("\n")}`);
      console.log(`built in ${buildSeconds.toFixed(0)} s`);
    }
    const prebuilt: Speed[] = [];
    const local: Speed[] = [];
    for (let run = 0; run < options.runs; run++) {
      // Interleaved, alternating which goes first: the shared machine's load drifts.
      const order = run % 2 === 0 ? (["prebuilt", "local"] as const) : (["local", "prebuilt"] as const);
      for (const which of order) {
        const result = speed(which === "prebuilt" ? prebuiltCopy.packageDir : COPY, model, options.threads);
        if (result.buildType !== (which === "prebuilt" ? "prebuilt" : "localBuild"))
          throw new Error(`${which} ran ${result.buildType}`);
        (which === "prebuilt" ? prebuilt : local).push(result);
        console.log(which, result);
      }
    }
    const row = (name: string, rows: Speed[]): BenchRow => ({
      name,
      promptTokPerS: median(rows.map((r) => r.promptTokPerS)),
      genTokPerS: median(rows.map((r) => r.genTokPerS)),
    });
    const a = row("prebuilt", prebuilt);
    const b = row("built for this machine", local);
    report(
      "native-build",
      [
        a,
        b,
        {
          name: "prebuilt / built",
          promptTokPerS: (a.promptTokPerS as number) / (b.promptTokPerS as number),
          genTokPerS: (a.genTokPerS as number) / (b.genTokPerS as number),
        },
      ],
      { buildSeconds, runs: options.runs, threads: options.threads, promptTokens: 512, genTokens: 128 },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(prebuiltCopy.root, { recursive: true, force: true });
    if (!options.keep) rmSync(COPY_ROOT, { recursive: true, force: true });
  }
}
