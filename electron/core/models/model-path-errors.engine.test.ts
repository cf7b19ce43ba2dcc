/**
 * Model-path errors name the file as the user gave it: never the server's working directory,
 * nor the absolute path a relative one was resolved to. Real core and engine: a model opened by
 * a relative path, deleted, then the engine killed, so that the reload after the restart fails
 * and engine.status carries the engine's own message.
 */
import { copyFileSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineStatus } from "../../api";
import { writeFixtures } from "../../../native/gguf/fixtures";
import { createCore, type Core } from "../index";
import { EventRecorder } from "../../../testing/core/events";
import { spawnTestEngine } from "../../../testing/engine/real-engine";
import { suiteDir } from "../../../testing/core/temp-dir";

const ctx = { transport: "http" as const };
const dir = suiteDir("macaron-model-paths-");
let core: Core;
let events: EventRecorder;
/** The engine processes started, newest last. */
const pids: (number | undefined)[] = [];

beforeAll(async () => {
  const spawn = spawnTestEngine();
  core = await createCore({
    dataDir: join(dir.path, "data"),
    spawnEngine: () => {
      const engine = spawn();
      pids.push(engine.pid);
      return engine;
    },
  });
  events = new EventRecorder((l) => core.subscribe(l));
});
afterAll(async () => {
  await core?.close();
});

describe("model-path errors", () => {
  it("name a model opened by a relative path as given when its reload fails after a crash", async () => {
    const fx = await writeFixtures(join(dir.path, "fx"));
    const file = join(dir.path, "my-model.gguf");
    copyFileSync(fx.basePath, file);
    const given = relative(process.cwd(), file);
    const opened = await core.dispatch("models.open", { path: given }, ctx);
    expect(opened.ok).toBe(true);

    rmSync(file);
    const failed = events.next("engine.status", (s: EngineStatus) => s.state === "error");
    process.kill(pids.at(-1)!, "SIGKILL");
    const status = await failed;
    expect(status.error).toMatch(/could not reload the model/);
    // The path as given ("../../tmp/…/my-model.gguf" from the working directory), and nothing
    // else of it: without the given path, the message holds neither the folder nor the cwd.
    expect(status.error).toContain(given);
    const rest = status.error!.split(given).join("");
    expect(rest).not.toContain(dir.path);
    expect(rest).not.toContain(process.cwd());
    expect((await core.dispatch("models.status", {}, ctx)).ok).toBe(true);
  });
});
