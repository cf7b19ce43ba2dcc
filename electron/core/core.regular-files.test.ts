/**
 * Only regular files are opened from API paths (issue 15, item 5): a FIFO, a device, a socket
 * or a folder given to any method that takes a path is refused at once, never opened blocking,
 * with an error that names the file and never the server's working directory. And private
 * files (item 6): the data folder is 0700, the database, its -wal/-shm and saved KV states 0600.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { basename, join, relative } from "node:path";
import type { LlamaContextSequence } from "node-llama-cpp";
import { describe, expect, it, onTestFinished } from "vitest";
import type { EngineStatus, ModelInfo } from "../api";
import { KvStateStore } from "../../native/engine/kv-state-store";
import { startFakeCore } from "../../testing/core/fake-core";
import { testDir } from "../../testing/core/temp-dir";
import { openRegularFile, statRegularFile } from "../../common/files/regular-file";

const ctx = { transport: "http" } as const;
const posix = process.platform !== "win32";

const scratch = () => testDir("macaron-paths-");

function fifoIn(dir: string, name = "pipe.gguf"): string {
  const path = join(dir, name);
  execFileSync("mkfifo", [path]);
  return path;
}

async function socketIn(dir: string): Promise<string> {
  const path = join(dir, "sock.gguf");
  const server: Server = createServer();
  await new Promise<void>((done) => server.listen(path, done));
  onTestFinished(() => new Promise<void>((done) => server.close(() => done())));
  return path;
}

/** `promise`, or a rejection when it has not settled within 2 s (a failure guard, not a sleep). */
async function settlesQuickly<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within 2 s (blocked?)`)), 2000);
  });
  try {
    return await Promise.race([promise, guard]);
  } finally {
    clearTimeout(timer);
  }
}

/** The methods that take a filesystem path, with the input around it and the expected code. */
const PATH_METHODS: { method: string; input: (path: string) => unknown; code: string }[] = [
  { method: "models.inspect", input: (path) => ({ path }), code: "model_invalid" },
  { method: "models.open", input: (path) => ({ path }), code: "model_invalid" },
  { method: "models.fit", input: (path) => ({ path }), code: "model_invalid" },
  { method: "models.loadSettings", input: (path) => ({ path }), code: "model_invalid" },
  {
    method: "models.setLoadSettings",
    input: (path) => ({
      path,
      settings: {
        contextSize: 2048,
        gpuLayers: "auto",
        flashAttention: "auto",
        kvCacheType: "f16",
        batchSize: null,
        threads: null,
      },
    }),
    code: "model_invalid",
  },
  { method: "adapters.install", input: (path) => ({ path }), code: "invalid_input" },
  { method: "adapters.installVersion", input: (path) => ({ path }), code: "invalid_input" },
];

describe.runIf(posix)("only regular files are opened from API paths", () => {
  it("the helper refuses a FIFO, devices, a socket and a folder without opening them", async () => {
    const dir = scratch();
    const cases: [string, RegExp][] = [
      [fifoIn(dir), /is a named pipe \(FIFO\), not a regular file/],
      ["/dev/zero", /is a device, not a regular file/],
      ["/dev/null", /is a device, not a regular file/],
      [await socketIn(dir), /is a socket, not a regular file/],
      [dir, /is a folder, not a regular file/],
      [join(dir, "nope"), /was not found/],
    ];
    for (const [path, why] of cases) {
      await expect(settlesQuickly(openRegularFile(path, basename(path)), path)).rejects.toThrow(why);
      await expect(statRegularFile(path, basename(path))).rejects.toThrow(basename(path));
    }
    const file = join(dir, "plain.bin");
    writeFileSync(file, "abc");
    const { handle, info } = await openRegularFile(file);
    expect(info.size).toBe(3);
    await handle.close();
  });

  it("every path method answers at once with an error naming the file, then works normally", async () => {
    const { core, call } = await startFakeCore();
    const dir = scratch();
    const folder = join(dir, "folder.gguf");
    mkdirSync(folder);
    const bad: [string, RegExp][] = [
      [fifoIn(dir), /named pipe \(FIFO\)/],
      ["/dev/zero", /a device/],
      ["/dev/null", /a device/],
      [await socketIn(dir), /a socket/],
      [folder, /a folder/],
    ];
    for (const { method, input, code } of PATH_METHODS) {
      for (const [path, why] of bad) {
        const result = await settlesQuickly(core.dispatch(method, input(path), ctx), `${method} ${path}`);
        expect(result.ok, `${method} ${path}`).toBe(false);
        if (result.ok) continue;
        expect(result.error.code, `${method} ${path}: ${result.error.message}`).toBe(code);
        expect(result.error.message, method).toMatch(why);
        expect(result.error.message, method).toContain(basename(path));
        expect(result.error.message, method).not.toContain(process.cwd());
      }
    }
    // A FIFO named like a model in the models folder is not deleted as a model file either.
    const status = await call<EngineStatus>("models.status", {});
    const demo = status.model!.path;
    const pipeInModels = fifoIn(join(demo, ".."), "pipe-model.gguf");
    const deleted = await settlesQuickly(
      core.dispatch("models.delete", { path: pipeInModels }, ctx),
      "delete",
    );
    expect(deleted.ok).toBe(false);
    if (!deleted.ok) expect(deleted.error.message).toMatch(/pipe-model\.gguf" is a named pipe/);

    // The same core still answers normal calls.
    expect((await call<ModelInfo>("models.inspect", { path: demo })).path).toBe(demo);
    expect((await call<EngineStatus>("models.open", { path: demo })).state).toBe("ready");
    expect(Array.isArray(await call<unknown[]>("adapters.list", {}))).toBe(true);
  });

  it("errors for relative paths never reveal the server's working directory", async () => {
    const { core } = await startFakeCore();
    const dir = scratch();
    const fifo = relative(process.cwd(), fifoIn(dir, "relative-pipe.gguf"));
    const missing = `missing-${Date.now()}.gguf`;
    for (const { method, input } of PATH_METHODS) {
      for (const path of [fifo, missing, "."]) {
        const result = await settlesQuickly(core.dispatch(method, input(path), ctx), `${method} ${path}`);
        expect(result.ok).toBe(false);
        if (result.ok) continue;
        expect(result.error.message, `${method} ${path}: ${result.error.message}`).not.toContain(
          process.cwd(),
        );
      }
    }
  });
});

describe("model errors name the path as given", () => {
  it("an engine failure that quotes the resolved path names the relative path instead", async () => {
    const { core, engine, call } = await startFakeCore();
    const demo = (await call<EngineStatus>("models.status", {})).model!.path;
    const given = relative(process.cwd(), demo);
    engine.loadError = new Error(`llama_model_load: failed to open ${demo}`);
    const result = await core.dispatch("models.open", { path: given }, ctx);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe("model_load_failed");
    expect(result.error.message).toContain(`failed to open ${given}`);
    expect(result.error.message).not.toContain(`open ${demo}`);
  });
});

describe.runIf(posix)("private files", () => {
  const mode = (path: string) => statSync(path).mode & 0o777;

  it("the data folder is 0700 and the database with its -wal/-shm 0600 after start-up", async () => {
    const { dataDir, call } = await startFakeCore();
    await call("conversations.create", {});
    expect(mode(dataDir)).toBe(0o700);
    for (const file of ["macaron.db", "macaron.db-wal", "macaron.db-shm"])
      expect(mode(join(dataDir, file)), file).toBe(0o600);
  });

  it("saved KV states and their sidecars are 0600 in a 0700 folder", async () => {
    const dir = scratch();
    const model = join(dir, "model.gguf");
    writeFileSync(model, "x");
    const stateDir = join(dir, "kv");
    const store = new KvStateStore(stateDir, await KvStateStore.identify(model, "test"), {}, () => undefined);
    const sequence = {
      contextTokens: [1, 2, 3],
      contextSize: 64,
      // What llama.cpp does: a plain 0644 file.
      saveStateToFile: (path: string) => {
        writeFileSync(path, Buffer.alloc(128, 7), { mode: 0o644 });
        return Promise.resolve({ fileSize: 128 });
      },
    } as unknown as LlamaContextSequence;
    expect(await store.save(sequence, "conversation", "base", [])).toBe(true);
    expect(mode(stateDir)).toBe(0o700);
    const files = readdirSync(stateDir);
    expect(files.some((f) => f.endsWith(".kv")) && files.some((f) => f.endsWith(".json"))).toBe(true);
    for (const file of files) expect(mode(join(stateDir, file)), file).toBe(0o600);
  });
});
