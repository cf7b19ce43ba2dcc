/**
 * The two builds bench/ttft.ts compares against the prebuilt binaries, both from the llama.cpp
 * source node-llama-cpp ships (llama/gitRelease.bundle), both kept between runs because each
 * takes minutes:
 * - the local build, with the app's own build code (NativeBuild) into a COPY of node-llama-cpp
 *   under node_modules/.macaron-native-build, the folder bench/native-build.ts keeps with --keep
 *   (so one build serves both benchmarks);
 * - llama.cpp's own llama-server, configured with the CPU options node-llama-cpp's build passes
 *   (Release, GGML_NATIVE on, no ccache, curl/OpenSSL off), under
 *   node_modules/.macaron-llama-server/<bundle commit>, so a new bundle builds afresh.
 *
 *   tsx bench/ttft-build.ts   (builds whichever is missing, prints the two paths)
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { hasLocalBuild, NativeBuild, nodeLlamaCppDir } from "../electron/core/engine/native-build";
import { copyNodeLlamaCpp } from "../testing/engine/node-llama-cpp-copy";

const NODE_MODULES = resolve(import.meta.dirname, "..", "node_modules");
export const LOCAL_COPY_FOLDER = ".macaron-native-build";
export const LOCAL_COPY = join(NODE_MODULES, LOCAL_COPY_FOLDER, "node_modules", "node-llama-cpp");
const SERVER_ROOT = join(NODE_MODULES, ".macaron-llama-server");

/** The bundle node-llama-cpp builds from, and the commit its HEAD names. */
export function bundle(): { path: string; commit: string } {
  const path = join(nodeLlamaCppDir(), "llama", "gitRelease.bundle");
  const heads = execFileSync("git", ["bundle", "list-heads", path], { encoding: "utf8" });
  const commit = /^([0-9a-f]{40})\s/m.exec(heads)?.[1];
  if (!commit) throw new Error(`no commit in ${path}: ${heads}`);
  return { path, commit };
}

/** node-llama-cpp's copy holding a local build: the kept one, or built now (minutes). */
export async function ensureLocalBuild(
  log = console.log,
): Promise<{ packageDir: string; buildSeconds: number | null }> {
  if (existsSync(LOCAL_COPY) && hasLocalBuild(LOCAL_COPY))
    return { packageDir: LOCAL_COPY, buildSeconds: null };
  const { packageDir } = copyNodeLlamaCpp(LOCAL_COPY_FOLDER);
  let shown = -1;
  const build = new NativeBuild({
    packageDir,
    engineInfo: null,
    relaunch: null,
    emit: (b) => {
      const tenth = Math.floor((b.progress ?? 0) * 10);
      if (tenth !== shown) {
        shown = tenth;
        log(`local build ${b.state} ${Math.round((b.progress ?? 0) * 100)}%  ${b.log.at(-1) ?? ""}`);
      }
    },
  });
  const started = performance.now();
  await build.build();
  await build.done;
  const status = await build.status();
  if (status.state !== "built")
    throw new Error(`the local build failed: ${status.error}\n${status.log.join("\n")}`);
  return { packageDir, buildSeconds: (performance.now() - started) / 1000 };
}

function run(cmd: string, args: string[], cwd: string, log: (line: string) => void): Promise<void> {
  return new Promise((done, fail) => {
    log(`$ ${cmd} ${args.join(" ")}`);
    const child = spawn(cmd, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    const tail: string[] = [];
    for (const stream of [child.stdout, child.stderr]) {
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => {
        for (const line of chunk.split("\n").filter(Boolean)) {
          tail.push(line);
          if (tail.length > 40) tail.shift();
          // Ninja's step counter every 10 %, not every line: the build prints thousands.
          const step = /^\[(\d+)\/(\d+)\]/.exec(line);
          if (
            step &&
            Math.floor((Number(step[1]) * 10) / Number(step[2])) !==
              Math.floor(((Number(step[1]) - 1) * 10) / Number(step[2]))
          )
            log(`llama-server build ${line.slice(0, 120)}`);
        }
      });
    }
    child.on("error", fail);
    child.on("close", (code) =>
      code === 0 ? done() : fail(new Error(`${cmd} ${args[0]} exited ${code}:\n${tail.join("\n")}`)),
    );
  });
}

/**
 * CMake options of node-llama-cpp's own build (dist/bindings/utils/compileLLamaCpp.js) that
 * change the CPU code, so llama-server and the local build compile ggml alike; plus what the
 * server alone needs (tools on, the web UI neither downloaded nor built: no network here).
 */
export const SERVER_CMAKE_OPTIONS = [
  "-DCMAKE_BUILD_TYPE=Release",
  "-DGGML_NATIVE=ON",
  "-DGGML_CCACHE=OFF",
  "-DGGML_METAL=OFF",
  "-DGGML_BUILD_NUMBER=1",
  "-DLLAMA_CURL=OFF",
  "-DLLAMA_OPENSSL=OFF",
  "-DLLAMA_BUILD_COMMON=ON",
  "-DLLAMA_BUILD_TOOLS=ON",
  "-DLLAMA_BUILD_SERVER=ON",
  "-DLLAMA_BUILD_TESTS=OFF",
  "-DLLAMA_BUILD_EXAMPLES=OFF",
  "-DLLAMA_BUILD_APP=OFF",
  "-DLLAMA_BUILD_UI=OFF",
  "-DLLAMA_USE_PREBUILT_UI=OFF",
];

/** llama-server built from the same bundle: cached per bundle commit, else built now (minutes). */
export async function ensureLlamaServer(
  log = console.log,
): Promise<{ binary: string; commit: string; buildSeconds: number | null }> {
  const { path, commit } = bundle();
  const root = join(SERVER_ROOT, commit.slice(0, 12));
  const binary = join(root, "build", "bin", "llama-server");
  if (existsSync(binary)) return { binary, commit, buildSeconds: null };
  const started = performance.now();
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  try {
    await run("git", ["clone", "--quiet", path, "src"], root, log);
    await run("cmake", ["-S", "src", "-B", "build", "-G", "Ninja", ...SERVER_CMAKE_OPTIONS], root, log);
    await run("cmake", ["--build", "build", "--target", "llama-server", "--parallel", "2"], root, log);
  } catch (err) {
    // A half-made build would look cached next time only if the binary were there; remove it all.
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  if (!existsSync(binary)) throw new Error(`the build finished without ${binary}`);
  return { binary, commit, buildSeconds: (performance.now() - started) / 1000 };
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const which = process.argv[2] ?? "both";
  if (which !== "local") console.log(await ensureLlamaServer());
  if (which !== "server") console.log(await ensureLocalBuild());
}
