/**
 * `bench serve`'s baseline: node-llama-cpp driven directly as the engine drives it (the same
 * backend, context settings, chat wrapper, history and sampling; one warm sequence reused, as
 * the engine reuses its slot), minus the process hop, IPC, HTTP and SSE.
 *
 * It runs in a process of its own, started like the engine (engineEnv: huge pages for
 * llama.cpp's buffers; its threads kept on the engine's cores, native/engine/affinity.ts), not
 * inside the benchmark's: two processes running the same code on the same file differ by 5–8%
 * in generation speed when their memory is set up differently, which is the size of the
 * overhead this benchmark measures (see engine-env.ts). The second direct
 * process (`direct A/A`) shows what is left of that: its ratio to the first is the noise floor.
 *
 * Protocol (over the fork's IPC channel): {open: {path, settings, prompt}} → {ready: {promptTokens}};
 * {run: maxTokens} → {ran: Run}; disconnecting ends the process.
 */
import { fork, type ChildProcess } from "node:child_process";
import { LlamaChat, type LlamaContext, type LlamaModel } from "node-llama-cpp";
import type { ChatTurn, KvCacheType } from "../common/engine-protocol";
import { engineEnv } from "../electron/core/engine/engine-env";
import { pinEngineThreads } from "../native/engine/affinity";
import { chooseChatWrapper } from "../native/engine/chat-wrapper";
import { toChatHistory } from "../native/engine/history";
import { kvCacheTypes, loadLlamaBackend } from "../native/engine/llama-backend";
import { samplerSettings } from "../native/engine/sampling";

export interface EngineSettings {
  contextSize: number;
  sequences: number;
  flashAttention: "auto" | "on" | "off";
  kvCacheType: KvCacheType;
  batchSize: number;
  threads: number;
  /** As the app's engine reports it (weights mapped or read into memory); absent: mapped. */
  mmap?: boolean;
}

export interface Run {
  ms: number;
  ttftMs: number;
  tokens: number;
  promptTokens: number;
}

type Request = { open: { path: string; settings: EngineSettings; history: ChatTurn[] } } | { run: number };
type Reply = { ready: { promptTokens: number } } | { ran: Run } | { failed: string };

async function openDirect(path: string, settings: EngineSettings, turns: ChatTurn[]) {
  // As the engine's entry does, before llama.cpp loads (MACARON_ENGINE_AFFINITY=0: unpinned).
  pinEngineThreads(settings.threads);
  const backend = await loadLlamaBackend(settings.threads);
  const model: LlamaModel = await backend.llama.loadModel({
    modelPath: path,
    useMmap: settings.mmap ?? true,
  });
  const flashAttention = settings.flashAttention === "on";
  const kv = kvCacheTypes(settings.kvCacheType, flashAttention);
  const context: LlamaContext = await model.createContext({
    contextSize: settings.contextSize,
    sequences: settings.sequences,
    threads: settings.threads,
    batchSize: settings.batchSize,
    flashAttention,
    experimentalKvCacheKeyType: kv.key,
    experimentalKvCacheValueType: kv.value,
  });
  const wrapper = chooseChatWrapper(model);
  // One sequence kept across runs: the engine reuses its slot, so the prompt's prefix is cached.
  const chat = new LlamaChat({ contextSequence: context.getSequence(), chatWrapper: wrapper });
  const history = toChatHistory(turns);
  const promptTokens = wrapper
    .generateContextState({ chatHistory: history })
    .contextText.tokenize(model.tokenizer).length;
  const sampling = samplerSettings(model, { temperature: 0, maxTokens: 1 });
  return {
    promptTokens,
    async run(maxTokens: number): Promise<Run> {
      const t0 = performance.now();
      let ttftMs = NaN;
      let tokens = 0;
      await chat.generateResponse(history, {
        maxTokens,
        ...sampling,
        onTextChunk: () => {
          if (Number.isNaN(ttftMs)) ttftMs = performance.now() - t0;
        },
        onToken: (t) => (tokens += t.length),
      });
      return { ms: performance.now() - t0, ttftMs, tokens, promptTokens };
    },
  };
}

/**
 * Baseline processes not stopped yet: killed when the benchmark's process ends in any way (each
 * leads its own process group; a child whose parent vanished also leaves on the IPC disconnect).
 */
const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const proc of live) {
    try {
      if (proc.pid !== undefined) process.kill(-proc.pid, "SIGKILL");
    } catch {
      // ESRCH: gone already.
    }
  }
});

export interface DirectProcess {
  promptTokens: number;
  run(maxTokens: number): Promise<Run>;
  stop(): Promise<void>;
}

/**
 * Starts a baseline process and loads the model in it; `stop()` ends it (and so does the
 * benchmark's exit). `env` is the engine's environment unless a benchmark compares another (bench/direct-ab.ts).
 */
export async function startDirect(
  path: string,
  settings: EngineSettings,
  history: ChatTurn[],
  env: NodeJS.ProcessEnv = engineEnv(process.env),
): Promise<DirectProcess> {
  const proc = fork(import.meta.filename, ["--direct-child"], {
    // The tsx loader this benchmark runs under; by default the engine's environment.
    execArgv: process.execArgv,
    env,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    detached: true,
    serialization: "advanced",
  });
  live.add(proc);
  const exited = new Promise<void>((ok) => proc.once("exit", () => ok()));
  const ask = (request: Request) =>
    new Promise<Reply>((ok, fail) => {
      const onExit = () => fail(new Error("the direct baseline process exited"));
      proc.once("exit", onExit);
      proc.once("message", (reply: Reply) => {
        proc.off("exit", onExit);
        if ("failed" in reply) fail(new Error(`direct baseline: ${reply.failed}`));
        else ok(reply);
      });
      proc.send(request);
    });
  const ready = await ask({ open: { path, settings, history } });
  if (!("ready" in ready)) throw new Error("direct baseline: unexpected reply to open");
  return {
    promptTokens: ready.ready.promptTokens,
    async run(maxTokens) {
      const reply = await ask({ run: maxTokens });
      if (!("ran" in reply)) throw new Error("direct baseline: unexpected reply to run");
      return reply.ran;
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.disconnect();
        await exited;
      }
      live.delete(proc);
    },
  };
}

if (process.argv.includes("--direct-child")) {
  let direct: Awaited<ReturnType<typeof openDirect>> | null = null;
  const reply = (message: Reply) => process.send!(message);
  process.on("message", (request: Request) => {
    void (async () => {
      try {
        if ("open" in request) {
          direct = await openDirect(request.open.path, request.open.settings, request.open.history);
          reply({ ready: { promptTokens: direct.promptTokens } });
        } else {
          if (!direct) throw new Error("run before open");
          reply({ ran: await direct.run(request.run) });
        }
      } catch (error) {
        reply({ failed: error instanceof Error ? error.message : String(error) });
      }
    })();
  });
  // The benchmark is done with us (or gone): no disposal dance, the process ends.
  process.on("disconnect", () => process.exit(0));
}
