import { describe, expect, it } from "vitest";
import type { EngineInfo, EngineMessage, EngineRequest, FitResult } from "../../../common/engine-protocol";
import { ApiError } from "../../api/errors";
import { EngineSupervisor } from "./supervisor";
import type { EngineLifecycleEvent, EngineProcess, LoadedModel } from "./types";

// The supervisor's restart logic in isolation, with scripted fake processes (the real
// process is covered by supervisor.test.ts).
class FakeEngine implements EngineProcess {
  static nextPid = 1000;
  readonly pid = FakeEngine.nextPid++;
  readonly received: EngineRequest[] = [];
  private messageListeners: ((m: unknown) => void)[] = [];
  private exitListeners: ((code: number | null, signal: string | null) => void)[] = [];
  killed = false;
  onRequest: (request: EngineRequest, engine: FakeEngine) => void = () => {};

  send(message: unknown): void {
    this.received.push(message as EngineRequest);
    queueMicrotask(() => this.onRequest(message as EngineRequest, this));
  }
  onMessage(listener: (message: unknown) => void): void {
    this.messageListeners.push(listener);
  }
  onExit(listener: (code: number | null, signal: string | null) => void): void {
    this.exitListeners.push(listener);
  }
  kill(): void {
    this.killed = true;
    queueMicrotask(() => this.exit(null, "SIGTERM"));
  }
  reply(message: EngineMessage): void {
    for (const listener of this.messageListeners) listener(message);
  }
  exit(code: number | null, signal: string | null): void {
    for (const listener of this.exitListeners) listener(code, signal);
  }
}

const info: LoadedModel = { path: "/m.gguf", contextSize: 512, gpu: null, threads: 1, trainContextSize: 512 };

/** A spawner whose processes say ready and answer loads; `crashOnStart` makes them die at once. */
function fakeSpawner() {
  const spawned: FakeEngine[] = [];
  const control = { crashOnStart: false };
  const spawn = () => {
    const engine = new FakeEngine();
    spawned.push(engine);
    engine.onRequest = (request, self) => {
      if (request.type === "load")
        self.reply({ type: "result", id: request.id, value: { ...info, path: request.path } });
    };
    queueMicrotask(() => {
      if (control.crashOnStart) engine.exit(null, "SIGSEGV");
      else engine.reply({ type: "ready", pid: engine.pid });
    });
    return engine;
  };
  return { spawn, spawned, control };
}

function nextEvent(
  engine: EngineSupervisor,
  type: EngineLifecycleEvent["type"],
): Promise<EngineLifecycleEvent> {
  return new Promise((resolve) => {
    const off = engine.onLifecycle((event) => {
      if (event.type === type) {
        off();
        resolve(event);
      }
    });
  });
}

describe("EngineSupervisor restarts", () => {
  it("gives up after repeated rapid crashes, then restarts on an explicit load", async () => {
    const { spawn, spawned, control } = fakeSpawner();
    const engine = new EngineSupervisor(spawn, { maxRapidCrashes: 3, backoffMs: () => 0 });
    await engine.load("/m.gguf");
    const gaveUp = nextEvent(engine, "gave-up");
    control.crashOnStart = true;
    spawned[0]!.exit(null, "SIGSEGV");
    const event = await gaveUp;
    expect(event.type).toBe("gave-up");
    expect(event.type === "gave-up" && event.message).toMatch(/crashed 3 times in a row/);
    expect(spawned).toHaveLength(3);
    expect(engine.state).toBe("failed");
    expect(engine.loaded).toBeNull();
    const refused = engine.generate(
      [{ role: "user", text: "x" }],
      { temperature: 0, maxTokens: 1 },
      () => {},
    );
    await expect(refused).rejects.toMatchObject({ code: "engine_crashed" });
    await expect(refused).rejects.toThrow(/was not restarted/);

    control.crashOnStart = false;
    await expect(engine.load("/m.gguf")).resolves.toMatchObject({ path: "/m.gguf" });
    expect(engine.state).toBe("ready");
    await engine.close();
  });

  it("does not say 'in a row' when the engine came back up between the crashes", async () => {
    const { spawn, spawned } = fakeSpawner();
    const engine = new EngineSupervisor(spawn, { maxRapidCrashes: 3, backoffMs: () => 0 });
    await engine.load("/m.gguf");
    const gaveUp = nextEvent(engine, "gave-up");
    for (let i = 0; i < 2; i++) {
      const reloaded = nextEvent(engine, "model-reloaded");
      spawned.at(-1)!.exit(null, "SIGSEGV");
      await reloaded;
      expect(engine.state).toBe("ready");
    }
    spawned.at(-1)!.exit(null, "SIGSEGV");
    const event = await gaveUp;
    const message = event.type === "gave-up" ? event.message : "";
    expect(message).not.toMatch(/in a row/);
    expect(message).toMatch(/^The engine crashed 3 times within \d+ s \(last: signal SIGSEGV\)/);
    expect(engine.state).toBe("failed");
    await engine.close();
  });

  it("reports reload-failed when the model no longer loads after a crash", async () => {
    const { spawn, spawned } = fakeSpawner();
    const engine = new EngineSupervisor(spawn, { backoffMs: () => 0 });
    await engine.load("/m.gguf");
    const failed = nextEvent(engine, "reload-failed");
    const restarted = nextEvent(engine, "restarted");
    spawned[0]!.exit(1, null);
    await restarted;
    // The fresh process refuses the reload (e.g. the file was deleted meanwhile).
    const second = spawned[1]!;
    const load = second.received.find((r) => r.type === "load")!;
    second.reply({
      type: "error",
      id: load.id,
      code: "model_load_failed",
      message: "Model file not found: /m.gguf",
    });
    expect(await failed).toEqual({ type: "reload-failed", message: "Model file not found: /m.gguf" });
    expect(engine.loaded).toBeNull();
    await engine.close();
  });

  it("rejects requests in flight on close and kills the process", async () => {
    const { spawn, spawned } = fakeSpawner();
    const engine = new EngineSupervisor(spawn);
    await engine.load("/m.gguf");
    const pending = engine.generate(
      [{ role: "user", text: "x" }],
      { temperature: 0, maxTokens: 1 },
      () => {},
    );
    await engine.close();
    await expect(pending).rejects.toThrow(ApiError);
    await expect(pending).rejects.toMatchObject({ code: "internal" });
    await expect(pending).rejects.toThrow(/shut down/);
    expect(spawned[0]!.killed).toBe(true);
    await expect(engine.load("/m.gguf")).rejects.toThrow(/shut down/);
  });

  it("sends an abort for the right request when the caller's signal fires", async () => {
    const { spawn, spawned } = fakeSpawner();
    const engine = new EngineSupervisor(spawn);
    await engine.load("/m.gguf");
    const controller = new AbortController();
    const pending = engine.generate(
      [{ role: "user", text: "x" }],
      { temperature: 0, maxTokens: 9 },
      () => {},
      controller.signal,
    );
    await new Promise((resolve) => setImmediate(resolve));
    const generate = spawned[0]!.received.find((r) => r.type === "generate")!;
    controller.abort();
    expect(spawned[0]!.received.at(-1)).toMatchObject({ type: "abort", target: generate.id });
    spawned[0]!.reply({
      type: "result",
      id: generate.id,
      value: {
        text: "",
        stopReason: "abort",
        tokens: 0,
        ttftMs: null,
        durationMs: 1,
        promptTokensEvaluated: 1,
        contextTokens: 1,
        contextSize: 512,
      },
    });
    await expect(pending).resolves.toMatchObject({ stopReason: "abort" });
    await engine.close();
  });

  it("kills a process that never says ready and starts another", async () => {
    const spawned: FakeEngine[] = [];
    const engine = new EngineSupervisor(
      () => {
        const fake = new FakeEngine();
        spawned.push(fake);
        // Only the second process comes up.
        if (spawned.length === 2) queueMicrotask(() => fake.reply({ type: "ready", pid: fake.pid }));
        fake.onRequest = (request, self) => self.reply({ type: "result", id: request.id, value: info });
        return fake;
      },
      { readyTimeoutMs: 50, backoffMs: () => 0 },
    );
    await expect(engine.load("/m.gguf")).resolves.toEqual(info);
    expect(spawned[0]!.killed).toBe(true);
    expect(engine.pid).toBe(spawned[1]!.pid);
    await engine.close();
  });

  it("close does not wait out its grace for an engine that died (Ctrl-C reaches the whole group)", async () => {
    const { spawn, spawned } = fakeSpawner();
    // A grace longer than the test's timeout: close must end on the engine's exit.
    const engine = new EngineSupervisor(spawn, { backoffMs: () => 0, closeGraceMs: 10 * 60_000 });
    await engine.load("/m.gguf");
    spawned[0]!.onRequest = (request, self) => {
      if (request.type === "unload") self.exit(null, "SIGINT");
    };
    await engine.close();
    expect(spawned[0]!.received.map((r) => r.type)).toEqual(["load", "unload"]);
    expect(engine.state).toBe("closed");
  });

  it("relaunch: unloads (saving caches), starts a fresh process and reloads with the same settings", async () => {
    const { spawn, spawned } = fakeSpawner();
    const engine = new EngineSupervisor(spawn, { backoffMs: () => 0, stateDir: "/data/kv" });
    const events: EngineLifecycleEvent["type"][] = [];
    engine.onLifecycle((e) => events.push(e.type));
    spawned[0]!.onRequest = (request, self) => {
      if (request.type === "load") self.reply({ type: "result", id: request.id, value: info });
      if (request.type === "unload") self.reply({ type: "result", id: request.id, value: null });
    };
    await engine.load("/m.gguf", undefined, { contextSize: 2048, kvCacheType: "q8_0" });
    await engine.relaunch();
    expect(spawned[0]!.received.map((r) => r.type)).toEqual(["load", "unload"]);
    expect(spawned[0]!.killed).toBe(true);
    expect(engine.pid).toBe(spawned[1]!.pid);
    expect(spawned[1]!.received[0]).toMatchObject({
      type: "load",
      path: "/m.gguf",
      contextSize: 2048,
      kvCacheType: "q8_0",
      stateDir: "/data/kv",
    });
    expect(events).toEqual(["restarted", "model-reloaded"]);
    expect(engine.state).toBe("ready");
    expect(engine.loaded).toEqual(info);
    await engine.close();
  });

  it("forwards fit and info requests", async () => {
    const { spawn, spawned } = fakeSpawner();
    const engine = new EngineSupervisor(spawn);
    const fit: FitResult = {
      contextSize: 4096,
      gpuLayers: 0,
      totalLayers: 4,
      ramBytes: 1,
      vramBytes: 0,
      maxContextSize: 8192,
      trainContextSize: 8192,
      machine: {
        ramTotalBytes: 2,
        ramFreeBytes: 1,
        vramTotalBytes: 0,
        vramFreeBytes: 0,
        gpu: null,
        cpuCores: 2,
      },
      fits: true,
      summary: "fits",
      model: {
        architecture: "llama",
        name: null,
        parameters: 1,
        fileBytes: 1,
        expertCount: null,
        expertUsedCount: null,
      },
    };
    const build: EngineInfo = { buildType: "prebuilt", gpu: null, llamaCpp: "b1" };
    spawned[0]!.onRequest = (request, self) =>
      self.reply({ type: "result", id: request.id, value: request.type === "fit" ? fit : build });
    await expect(engine.fit({ url: "https://h/x.gguf" }, { contextSize: 4096 })).resolves.toEqual(fit);
    await expect(engine.info()).resolves.toEqual(build);
    expect(spawned[0]!.received).toMatchObject([
      { type: "fit", source: { url: "https://h/x.gguf" }, contextSize: 4096 },
      { type: "info" },
    ]);
    await engine.close();
  });
});
