import { open } from "node:fs/promises";
import os from "node:os";
import { basename } from "node:path";
import {
  GgmlType,
  GgufInsights,
  InsufficientMemoryError,
  LlamaChat,
  LlamaCompletion,
  LlamaVocabularyType,
  readGgufFileInfo,
  type ChatModelFunctions,
  type ChatWrapper,
  type GbnfJsonObjectSchema,
  type LlamaChatResponse,
  type LlamaCompletionResponse,
  type LlamaContext,
  type LlamaContextOptions,
  type LlamaContextSequence,
  type LlamaGrammar,
  type LlamaModel,
  type Token,
  type TokenMeterState,
} from "node-llama-cpp";
import { pendingChatFormat } from "./chat-format-cache";
import { AdapterGroups } from "./adapter-groups";
import { alignDecodes } from "./decode-barrier";
import { decodeTraceFile, processTrace, traceDecodes } from "./decode-trace";
import { Embedder } from "./embedder";
import { EngineFailure } from "./engine-failure";
import { toChatHistory } from "./history";
import { KvStateStore, sharedPrefix } from "./kv-state-store";
import { ANONYMOUS, DEFAULT_KV_POLICY, KvSlots, MIXED, type KvSlot } from "./kv-slots";
import { adapterSetKey, LiveAdapters, normalizeAdapters } from "./live-adapters";
import {
  DEFAULT_SEQUENCES,
  defaultContextSize,
  fittingSequences,
  headSizeOf,
  MIN_DEFAULT_CONTEXT,
  readFileInfo,
  sequencesSetting,
  weightBytes,
} from "./fit-estimate";
import {
  kvCacheTypes,
  machineMemory,
  resolveFlashAttention,
  weightsInMemory,
  type LlamaBackend,
} from "./llama-backend";
import { scoreAnswer } from "./logprobs";
import { samplerSettings } from "./sampling";
import { grammarSchemaProblem } from "../../common/grammar-schema";
import {
  CallRecorder,
  isForced,
  toFunctions,
  toolChatWrapper,
  toToolCalls,
  ToolRequestError,
} from "./tool-calls";
import type {
  ChatTurn,
  EmbedResult,
  GenerateOptions,
  GenerateResult,
  KvCacheType,
  LoadedModel,
  LoadedSettings,
  LoadOptions,
  TokenLogprob,
  ToolCallFormat,
  ToolCallOut,
} from "../../common/engine-protocol";
import { holdToken, tokenDelayMs } from "./token-delay";
import { grammarProblem } from "../../common/generate-rules";
import { switchedOff, switchedOn } from "../../common/env-switch";

/** Set for tests that act on a running answer (token-delay.ts); 0 otherwise. */
const TOKEN_DELAY_MS = tokenDelayMs();
/** The most sequences a load that names none gets (fit-estimate.ts), for the engine's callers. */
export { DEFAULT_SEQUENCES };

/** The sequences a context that starts with one gets at its first growth (nextSequenceCount). */
const FIRST_GROWTH = 4;

/**
 * The sequences a context of `current` grows to (ModelSession.grow), up to `max`: 4 at the first
 * growth (a burst of requests runs at once), then twice as many each time it is full again. In
 * steps, because where llama.cpp writes every KV cell when it creates a context (the prebuilt
 * binaries, other systems) a user with two clients at once should not pay for eight.
 */
export function nextSequenceCount(current: number, max: number): number {
  return Math.min(max, Math.max(FIRST_GROWTH, current * 2));
}

/**
 * Tokens beyond the prompt that must stay free for LlamaChat to take the prompt as it is: it
 * compresses the history (drops its start) unless prompt + 1 < context size. So a chat prompt
 * may have at most contextSize − 2 tokens.
 */
const CHAT_FREE_TOKENS = 2;

/** LlamaCompletion (no context shift, shift size 1) keeps a prompt of up to contextSize − 1 tokens. */
const COMPLETION_FREE_TOKENS = 1;

export interface ContextOptions extends LoadOptions {
  /**
   * Tokens per sequence, capped by the model's training context. Default: the training
   * context up to DEFAULT_CONTEXT_CAP (8k), less when the free memory holds less.
   */
  contextSize?: number;
  /**
   * Default: MACARON_ENGINE_SEQUENCES (sequencesSetting), else up to DEFAULT_SEQUENCES as the
   * free memory allows (fittingSequences: their KV caches within KV_MEMORY_SHARE of it).
   */
  sequences?: number;
  /** Where conversations' KV states are saved and restored (see KvStateStore); none: not saved. */
  stateDir?: string;
  /**
   * Start with one sequence and grow towards `sequences` when all are taken (ModelSession.grow);
   * false: all of them at load. Default: MACARON_ENGINE_KV_GROWTH, on unless "0"/"off".
   */
  growSequences?: boolean;
}

/**
 * How the load's progress is split: the weights until MODEL_SHARE, then the context (its KV
 * cache and compute buffers are allocated in one call without progress: CONTEXT_DONE when it
 * returns), 1 only when the session is ready to answer.
 */
const MODEL_SHARE = 0.85;
const CONTEXT_DONE = 0.97;

/** A load failure whose message is meant for the user as is. */
export class ModelLoadError extends Error {
  override name = "ModelLoadError";
}

/**
 * One loaded model with its context, whose sequences keep KV caches across turns (LlamaChat
 * reuses the common token prefix), the LoRA set applied on that live context, and a lazily
 * created embedding context.
 */
export class ModelSession {
  private readonly embedder: Embedder;
  /** The adapter files of each set key seen, to stamp saved states with. */
  private readonly setPaths = new Map<string, string[]>();
  /** The saves started after the last generations; the next request waits for them first. */
  private persisting: Promise<void> = Promise.resolve();
  /** The live context and what is bound to it; replaced by a bigger one when it grows. */
  private core: ContextCore;
  /** The context being replaced by one with more sequences (see grow), if it is. */
  private growing: Promise<void> | null = null;
  /** A request found every sequence taken while the context was growing (see grow). */
  private growAgain = false;

  private constructor(
    readonly info: LoadedModel,
    readonly model: LlamaModel,
    context: LlamaContext,
    private readonly chatWrapper: ChatWrapper,
    /** Saved conversation states, when the engine was given a folder for them. */
    readonly states: KvStateStore | null,
    /** The context options `context` was created with, less its size and sequences (for grow). */
    private readonly contextBase: ContextBase,
    /** Sequences the context grows to when they are needed (its count now, when it does not grow). */
    private maxSequences: number,
  ) {
    this.core = this.createCore(context);
    this.embedder = new Embedder(model, info.threads);
  }

  /** The live context. */
  get context(): LlamaContext {
    return this.core.context;
  }

  /** Switches adapters on the live context (tests and benchmarks time it directly). */
  get adapters(): LiveAdapters {
    return this.core.adapters;
  }

  /** The context's sequences and the adapter set each cache was evaluated under. */
  get slots(): KvSlots {
    return this.core.slots;
  }

  /** Which generations run now: one adapter set at a time, one sequence each (AdapterGroups). */
  get groups(): AdapterGroups {
    return this.core.groups;
  }

  /** Resolves once a growth in progress (see grow) is over; at once when none is. */
  async settled(): Promise<void> {
    // A growth may start another as it ends (see grow).
    while (this.growing) await this.growing;
  }

  /** Load `path` and create its context. Throws ModelLoadError with a user-facing message. */
  static async open(
    backend: LlamaBackend,
    path: string,
    options: ContextOptions,
    onProgress: (progress: number) => void,
  ): Promise<ModelSession> {
    await assertGgufFile(path);
    const name = basename(path);
    const kvCacheType: KvCacheType = options.kvCacheType ?? "f16";
    const flashAttention = resolveFlashAttention(options.flashAttention, kvCacheType, backend.gpu);
    const sequences =
      options.sequences ??
      sequencesSetting() ??
      (await defaultSequences(backend, path, {
        contextSize: options.contextSize,
        flashAttention,
        kvCacheType,
      }));
    const kv = kvCacheTypes(kvCacheType, flashAttention);
    const threads = options.threads ?? backend.threads;
    // The Llama instance caps every context's threads at maxThreads (set from the machine).
    if (backend.llama.maxThreads !== 0 && threads > backend.llama.maxThreads)
      backend.llama.maxThreads = threads;
    let model: LlamaModel;
    let reported = 0;
    const report = (progress: number): void => {
      // Never backwards, and 1 only once the session is ready (see MODEL_SHARE).
      if (progress <= reported) return;
      reported = progress;
      onProgress(progress);
    };
    // On the CPU a model that fits easily is read into memory: it generates faster than mapped.
    // MACARON_ENGINE_MMAP=on maps; otherwise node-llama-cpp decides ("auto": on a GPU it may
    // leave the file unmapped).
    const useMmap = weightsInMemory(backend.gpu, await weightBytes(path), os.freemem())
      ? false
      : switchedOn(process.env.MACARON_ENGINE_MMAP) || undefined;
    const gpuLayers = await modelGpuLayers(path, options, sequences, backend.gpu);
    let loadUnderWay = (): void => undefined;
    const underWay = new Promise<void>((resolve) => (loadUnderWay = resolve));
    // Worked out beside the load, on this thread while llama.cpp's read the weights
    // (chat-format-cache.ts); taken from the state folder when it was kept there.
    const chatFormat = pendingChatFormat(backend.llama, path, {
      cache: options.stateDir
        ? { dir: options.stateDir, identity: await chatFormatIdentity(path, backend) }
        : null,
      loadUnderWay: underWay,
    });
    try {
      model = await backend.llama
        .loadModel({
          modelPath: path,
          ...(useMmap === undefined ? {} : { useMmap }),
          gpuLayers,
          defaultContextFlashAttention: flashAttention,
          onLoadProgress: (p) => {
            loadUnderWay();
            report(Math.min(MODEL_SHARE, p * MODEL_SHARE));
          },
        })
        .finally(loadUnderWay);
    } catch (error) {
      await chatFormat.done;
      throw new ModelLoadError(describeLoadFailure(name, "load the model", error));
    }
    try {
      assertKvCacheFits(model, kvCacheType);
      const train = model.trainContextSize;
      const base: ContextBase = {
        threads,
        flashAttention,
        experimentalKvCacheKeyType: kv.key,
        experimentalKvCacheValueType: kv.value,
        ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
      };
      // An asked-for size is taken as is (capped at the training context: node-llama-cpp refuses
      // what does not fit); the default is the largest that fits, down to MIN_DEFAULT_CONTEXT.
      const contextSize =
        options.contextSize !== undefined
          ? Math.min(train, options.contextSize)
          : { min: Math.min(train, MIN_DEFAULT_CONTEXT), max: defaultContextSize(train) };
      // Every sequence holds a full KV cache, allocated and zeroed when the context is created:
      // the context starts with one and grows to `sequences` when a second is needed (grow).
      const initial = (options.growSequences ?? kvGrowth()) ? 1 : sequences;
      let context: LlamaContext;
      let max = sequences;
      try {
        // Growing keeps the size per sequence: take the size all `sequences` fit with, not the
        // bigger one a single sequence would get, or growing could not fit later.
        const size =
          initial < sequences && typeof contextSize !== "number"
            ? await model.fileInsights.configurationResolver.resolveContextContextSize(contextSize, {
                modelGpuLayers: model.gpuLayers,
                modelTrainContextSize: train,
                flashAttention,
                kvCacheKeyType: GgmlType[kv.key],
                kvCacheValueType: GgmlType[kv.value],
                batchSize: options.batchSize,
                sequences,
              })
            : contextSize;
        context = await model.createContext({ ...base, contextSize: size, sequences: initial });
      } catch (error) {
        // Better one cache (sequence-per-set then acts like reevaluate: one set cached at a
        // time, still exact) than no model at all.
        if (!(error instanceof InsufficientMemoryError) || sequences === 1) throw error;
        const single = typeof contextSize === "number" ? contextSize : { ...contextSize, min: 256 };
        context = await model.createContext({ ...base, contextSize: single, sequences: 1 });
        max = 1;
      }
      report(CONTEXT_DONE);
      const settings: LoadedSettings = {
        contextSize: context.contextSize,
        sequences: max,
        gpuLayers: model.gpuLayers,
        totalLayers: model.fileInsights.totalLayers,
        flashAttention: flashAttentionName(context.flashAttention),
        kvCacheType,
        batchSize: context.batchSize,
        threads: context.idealThreads,
        mmap: model.useMmap,
      };
      const info: LoadedModel = {
        path,
        contextSize: context.contextSize,
        gpu: backend.gpu,
        threads: settings.threads,
        trainContextSize: train,
        settings,
      };
      const identity = options.stateDir
        ? await KvStateStore.identify(path, engineIdentity(backend, context.flashAttention, kv))
        : null;
      const states = identity ? new KvStateStore(options.stateDir!, identity) : null;
      // Resolving the wrapper costs 0.25–0.5 s of CPU (ARCHITECTURE.md): once per model, not
      // per turn, beside the load, and kept across starts in the state folder when there is one.
      const chatWrapper = await chatFormat.wrapperFor(model);
      const session = new ModelSession(info, model, context, chatWrapper, states, base, max);
      report(1);
      return session;
    } catch (error) {
      await chatFormat.done;
      await model.dispose();
      if (error instanceof ModelLoadError) throw error;
      throw new ModelLoadError(describeLoadFailure(name, "create a context for the model", error));
    }
  }

  /**
   * Answer `history` under `options.adapters`, streaming text through `onText`; the KV cache is
   * reused as `options.kvPolicy` allows (see KvSlots), from the conversation's live sequence or
   * else from its saved state (`options.sessionKey`). Aborting `signal` ends the generation
   * with the partial text and stopReason "abort" (also while it waits: then nothing ran). Throws
   * AdapterError for an unusable adapter. Generations under the same adapter set run together,
   * each on its own sequence, batched by node-llama-cpp; one under another set waits for the
   * running group to drain, since the adapter set belongs to the whole context (AdapterGroups).
   *
   * With `options.tools` the model may call functions (node-llama-cpp function calling: the
   * name and then the arguments are generated under grammars made from the tools' schemas, so
   * they always parse). The generation ends at the first call, or parallel group of calls, with
   * stopReason "toolCalls", `toolCalls` and the text before the call as `text`; the call's own
   * text never reaches `onText`. The caller runs the tools and continues the history with the
   * calls and their results (ChatTurn.calls). Measured on the demo model (bench/README.md,
   * "tool-calls"): a call in the Agent adapter's own format under a one-integer schema generates
   * at 0.92–1.38× the free-text rate; a forced call with an array of bounded strings at
   * 0.46–0.73× (the grammar is evaluated per sampled token).
   */
  async generate(
    history: readonly ChatTurn[],
    options: GenerateOptions,
    onText: (text: string) => void,
    signal: AbortSignal,
  ): Promise<GenerateResult> {
    const started = performance.now();
    // The state saved after the previous turn must be on disk before the context moves on.
    await this.persisting;
    // Everything that can refuse the request comes before the adapters and the cache are touched.
    // Built before anything else: a schema the grammar cannot express fails the request early.
    const tools = this.toolSetup(options);
    const grammar = await this.grammarFor(options, tools !== null);
    const sampling = samplerSettings(this.model, options);
    // One tokenization per turn (~1 ms for 4k tokens of the demo, see bench/README.md): the
    // exact usage count, and the bound that keeps generation inside the context.
    const prompt = this.promptTokens(history, tools, options.toolFormat);
    const maxTokens = this.boundedMaxTokens(prompt.length, options.maxTokens, CHAT_FREE_TOKENS);
    const turn = await this.startTurn(options, options.sessionKey ?? ANONYMOUS, prompt, signal);
    if (!turn) return this.notStarted(started, prompt.length);
    const { slot } = turn;
    const { sequence } = slot;
    // A tool turn in another call syntax (or forced) lays the prompt out with its own wrapper,
    // on the same sequence: the common token prefix is reused all the same.
    const chat =
      tools && tools.wrapper !== this.chatWrapper
        ? new LlamaChat({ contextSequence: sequence, chatWrapper: tools.wrapper })
        : slot.chat;
    const meterBefore = sequence.tokenMeter.getState();
    let ttftMs: number | null = null;
    let streamed = "";
    const generated: Token[] = [];
    let response: LlamaChatResponse<ChatModelFunctions> | null = null;
    const recorder = tools ? new CallRecorder() : null;
    let refused: ToolCallOut[] | null = null;
    let logprobs: TokenLogprob[] | undefined;
    let used: TokenMeterState | null = null;
    try {
      // No lastEvaluationContextWindow: LlamaChat already reuses the sequence's common token
      // prefix (adaptStateToTokens); that option only tunes context shifting when it is full.
      // With functions and no onFunctionCall handler LlamaChat returns at the first call (or
      // the first parallel group): the caller runs the tools and continues the history.
      // maxTokens is bounded so that the answer ends (stopReason "maxTokens") before LlamaChat
      // would shift the context, which would drop the start of the conversation unasked.
      response = await chat.generateResponse(toChatHistory(history, options.toolFormat), {
        onTextChunk: (text) => {
          if (ttftMs === null) ttftMs = performance.now() - started;
          streamed += text;
          onText(text);
          holdToken(TOKEN_DELAY_MS);
        },
        onToken: (tokens) => generated.push(...tokens),
        signal,
        stopOnAbortSignal: true,
        maxTokens,
        ...sampling,
        customStopTriggers: options.stop && options.stop.length > 0 ? options.stop : undefined,
        // node-llama-cpp takes a grammar or functions, never both (toolSetup refuses both).
        ...(tools
          ? {
              functions: tools.functions,
              maxParallelFunctionCalls: options.parallelToolCalls === false ? 1 : undefined,
              onFunctionCall: recorder!.onFunctionCall,
              onFunctionCallParamsChunk: (chunk) => {
                if (ttftMs === null) ttftMs = performance.now() - started;
                recorder!.onFunctionCallParamsChunk(chunk);
              },
            }
          : { grammar }),
      });
      if (options.logprobs && !signal.aborted && !tools) {
        // Metered before scoring, which evaluates the answer again.
        used = sequence.tokenMeter.diff(meterBefore);
        logprobs = await this.score(
          sequence,
          prompt.length,
          generated,
          response.response,
          options.logprobs.top,
        );
      }
    } catch (error) {
      // Aborted before the first token: node-llama-cpp throws instead of returning.
      if (!signal.aborted) {
        refused = recorder?.refusedCalls() ?? null;
        if (!refused) throw error;
      }
    } finally {
      if (chat !== slot.chat) chat.dispose({ disposeSequence: false });
      this.endTurn(turn);
    }
    used ??= sequence.tokenMeter.diff(meterBefore);
    const toolCalls = signal.aborted ? [] : response ? toToolCalls(response) : (refused ?? []);
    // A call cut off by maxTokens: what was generated of it (LlamaChat keeps it to itself).
    const cutOffCall =
      toolCalls.length === 0 && response?.metadata.stopReason === "maxTokens" ? recorder?.cutOffCall() : null;
    return {
      text: response?.response ?? streamed,
      stopReason:
        toolCalls.length > 0 ? "toolCalls" : response ? toStopReason(response.metadata.stopReason) : "abort",
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
      ...(cutOffCall ? { cutOffCall } : {}),
      ...stopSequenceOf(response?.metadata, options.stop),
      tokens: used.usedOutputTokens,
      ttftMs,
      durationMs: performance.now() - started,
      // The prompt's last token is decoded with logits and metered as "output"; generated
      // tokens are all "output". So the prompt evaluated here = input tokens + that one.
      promptTokensEvaluated: used.usedInputTokens + (used.usedOutputTokens > 0 ? 1 : 0),
      promptTokens: prompt.length,
      ...(logprobs ? { logprobs } : {}),
      contextTokens: sequence.contextTokens.length,
      contextSize: this.context.contextSize,
    };
  }

  /**
   * Continue a raw `prompt` (no chat template) with node-llama-cpp's LlamaCompletion on the
   * shared anonymous cache, under `options.adapters`, with the same samplers, grammar (json /
   * jsonSchema), stop strings, context bound, abort and logprobs as generate. The prompt is
   * tokenized with special tokens parsed (as llama.cpp's server does: a prompt written in the
   * model's chat syntax means its control tokens), with BOS first when the model wants one.
   */
  async complete(
    promptText: string,
    options: GenerateOptions,
    onText: (text: string) => void,
    signal: AbortSignal,
  ): Promise<GenerateResult> {
    const started = performance.now();
    await this.persisting;
    if (options.tools && options.tools.length > 0)
      throw new EngineFailure("invalid_request", "A raw completion cannot call tools: leave tools out.");
    const grammar = await this.grammarFor(options, false);
    const sampling = samplerSettings(this.model, options);
    // LlamaCompletion puts BOS before the tokens it is given, exactly as it would for the text.
    const input = this.model.tokenize(promptText, true, this.bos === null ? undefined : "trimLeadingSpace");
    const promptLength = input.length + (this.bos === null ? 0 : 1);
    const maxTokens = this.boundedMaxTokens(promptLength, options.maxTokens, COMPLETION_FREE_TOKENS);
    const turn = await this.startTurn(options, ANONYMOUS, input, signal);
    if (!turn) return this.notStarted(started, promptLength);
    const { slot } = turn;
    const { sequence } = slot;
    const completion = new LlamaCompletion({ contextSequence: sequence, autoDisposeSequence: false });
    const meterBefore = sequence.tokenMeter.getState();
    let ttftMs: number | null = null;
    let streamed = "";
    const generated: Token[] = [];
    let response: LlamaCompletionResponse | null = null;
    let logprobs: TokenLogprob[] | undefined;
    let used: TokenMeterState | null = null;
    try {
      response = await completion.generateCompletionWithMeta(input, {
        onTextChunk: (text) => {
          if (ttftMs === null) ttftMs = performance.now() - started;
          streamed += text;
          onText(text);
          holdToken(TOKEN_DELAY_MS);
        },
        onToken: (tokens) => generated.push(...tokens),
        signal,
        stopOnAbortSignal: true,
        maxTokens,
        ...sampling,
        grammar,
        customStopTriggers: options.stop && options.stop.length > 0 ? options.stop : undefined,
        // The prompt was checked to fit: never truncate it, never shift the context.
        contextShiftSize: 1,
        disableContextShift: true,
      });
      if (options.logprobs && !signal.aborted) {
        used = sequence.tokenMeter.diff(meterBefore);
        logprobs = await this.score(
          sequence,
          promptLength,
          generated,
          response.response,
          options.logprobs.top,
        );
      }
    } catch (error) {
      if (!signal.aborted) throw error;
    } finally {
      completion.dispose();
      this.endTurn(turn);
    }
    used ??= sequence.tokenMeter.diff(meterBefore);
    return {
      text: response?.response ?? streamed,
      stopReason: response ? toStopReason(response.metadata.stopReason) : "abort",
      ...stopSequenceOf(response?.metadata, options.stop),
      tokens: used.usedOutputTokens,
      ttftMs,
      durationMs: performance.now() - started,
      promptTokensEvaluated: used.usedInputTokens + (used.usedOutputTokens > 0 ? 1 : 0),
      promptTokens: promptLength,
      ...(logprobs ? { logprobs } : {}),
      contextTokens: sequence.contextTokens.length,
      contextSize: this.context.contextSize,
    };
  }

  /**
   * Wait for this request's adapter group (AdapterGroups: same set runs together, another set
   * waits until the running group drains; a conversation's turn before API requests), then set
   * its adapters on the context and take a sequence for it (KvSlots, restoring a conversation's
   * saved state into an empty one). Null when `signal` fired while it waited: nothing ran.
   * Apply before acquiring: an unusable adapter must not cost the cached history.
   */
  private async startTurn(
    options: GenerateOptions,
    sessionKey: string,
    prompt: readonly Token[],
    signal: AbortSignal,
  ): Promise<Turn | null> {
    const adapters = normalizeAdapters(options.adapters);
    const setKey = adapterSetKey(adapters);
    let core: ContextCore;
    let release: (() => void) | null;
    for (;;) {
      core = this.core;
      // Every sequence is taken: this request would wait for one.
      if (core.groups.active >= core.groups.size) this.grow();
      release = await core.groups.enter(setKey, sessionKey !== ANONYMOUS, signal);
      if (!release) return null;
      if (!core.groups.isRetired) break;
      // The context grew while this request waited: it takes its place on the new one.
      release();
    }
    let slot: KvSlot | null = null;
    try {
      await core.adapters.apply(adapters);
      this.setPaths.set(
        setKey,
        adapters.map((a) => a.path),
      );
      slot = await core.slots.acquire(setKey, options.kvPolicy ?? DEFAULT_KV_POLICY, sessionKey, prompt);
      if (slot.sequence.contextTokens.length === 0) await this.restore(slot, prompt);
      return { core, slot, release };
    } catch (error) {
      if (slot) core.slots.release(slot);
      release();
      throw error;
    }
  }

  /** A context with `context`'s sequences, caches and adapter groups bound to it. */
  private createCore(context: LlamaContext): ContextCore {
    const slots = new KvSlots(
      context,
      this.chatWrapper,
      (slot) => this.save(slot),
      () => this.grow(),
    );
    // Concurrent generations' tokens in one batch (else they fall out of step: decode-barrier.ts).
    if (context.totalSequences > 1) alignDecodes(context, () => slots.inUse);
    const traceFile = decodeTraceFile();
    if (traceFile) traceDecodes(context, processTrace(traceFile));
    return {
      context,
      slots,
      adapters: new LiveAdapters(context, this.info.path),
      groups: new AdapterGroups(context.totalSequences),
    };
  }

  /**
   * Give the session a context with more sequences (nextSequenceCount: 4, then twice as many, up
   * to `maxSequences`), when a request finds all of them taken (it would wait, or evict a
   * cache). Starting with one and growing on demand saves the start (each sequence's KV cells
   * are allocated and zeroed when a context is created: 1.2 GB for 4 × 8,192 F16 cells of the
   * bench model) and the memory of a user who never needs more.
   * The app's local build on Linux touches no cell at creation
   * (electron/core/engine/llama-patches.ts), so there creating the bigger context takes
   * milliseconds; the prebuilt binaries and other systems still write every cell.
   *
   * The new context is created beside the old one (same size per sequence), which keeps
   * serving meanwhile; then new requests go to the new context, those waiting on the old one
   * move over, and the old one is freed once its generations end. Its caches were saved after
   * each turn (the conversations with a state folder), so they are restored on the new context
   * (KvStateStore converts a state saved with another sequence count); the others evaluate
   * their history again once. When the bigger context cannot be created the session keeps the
   * one it has. The triggering request itself runs on the old context.
   */
  private grow(): void {
    if (this.core.context.totalSequences >= this.maxSequences) return;
    if (this.growing) {
      // The new context is full already (a burst of requests) while the old one is still being
      // freed: grow again once it is, if requests still wait then.
      this.growAgain = true;
      return;
    }
    this.growing = this.replaceCore(this.core)
      .catch((error: unknown) => {
        // After the swap (freeing the old context failed): the new one serves, nothing to undo.
        process.stderr.write(`[engine] growing the context: ${(error as Error).message}\n`);
      })
      .finally(() => {
        this.growing = null;
        const { groups } = this.core;
        if (this.growAgain && groups.queued > 0 && groups.active >= groups.size) this.grow();
        this.growAgain = false;
      });
  }

  private async replaceCore(old: ContextCore): Promise<void> {
    const wanted = nextSequenceCount(old.context.totalSequences, this.maxSequences);
    let context: LlamaContext;
    try {
      context = await this.model.createContext({
        ...this.contextBase,
        contextSize: old.context.contextSize,
        sequences: wanted,
      });
    } catch (error) {
      process.stderr.write(
        `[engine] keeping ${old.context.totalSequences} sequence(s): could not create a context with ` +
          `${wanted} (${(error as Error).message})\n`,
      );
      this.maxSequences = old.context.totalSequences;
      return;
    }
    this.core = this.createCore(context);
    old.groups.retire();
    await old.groups.whenIdle();
    // Saved after each turn already; what is left unsaved goes before its context does.
    const saved = (async () => {
      for (const slot of old.slots.all) await this.save(slot);
    })();
    this.persisting = Promise.all([this.persisting, saved]).then(() => undefined);
    await saved;
    old.slots.dispose();
    await old.context.dispose();
  }

  /**
   * The generation on `turn` is over: its cache is saved (after the answer, not before it: costs
   * the user nothing, survives a kill -9), and only then are its sequence and group place given
   * back, so no other request evaluates on a sequence while it is being written out.
   */
  private endTurn(turn: Turn): void {
    const { slot } = turn;
    slot.dirty = true;
    const done = (): void => {
      turn.core.slots.release(slot);
      turn.release();
    };
    if (!this.wantsSave(slot)) {
      done();
      return;
    }
    const saved = this.save(slot).finally(done);
    this.persisting = Promise.all([this.persisting, saved]).then(() => undefined);
  }

  /** The result of a request aborted while it waited for its group: nothing was evaluated. */
  private notStarted(started: number, promptTokens: number): GenerateResult {
    return {
      text: "",
      stopReason: "abort",
      tokens: 0,
      ttftMs: null,
      durationMs: performance.now() - started,
      promptTokensEvaluated: 0,
      promptTokens,
      contextTokens: 0,
      contextSize: this.context.contextSize,
    };
  }

  /**
   * The token LlamaCompletion puts before a prompt, or null: node-llama-cpp's rule
   * (resolveBeginningTokenToPrepend, not exported), after llama.cpp's tokenizer.
   */
  private get bos(): Token | null {
    const type = this.model.vocabularyType;
    if (type === LlamaVocabularyType.rwkv || type === LlamaVocabularyType.ugm) return null;
    if (type === LlamaVocabularyType.wpm) return this.model.tokens.bos;
    return this.model.tokens.shouldPrependBosToken ? this.model.tokens.bos : null;
  }

  /**
   * `maxTokens` bounded by what the context leaves after a prompt of `promptLength` tokens.
   * Throws EngineFailure("context_length_exceeded") when the prompt leaves no room: LlamaChat
   * would otherwise drop the start of the conversation, LlamaCompletion the start of the prompt.
   * `free`: tokens LlamaChat keeps free beyond the prompt before it shifts (see CHAT_FREE_TOKENS).
   */
  private boundedMaxTokens(promptLength: number, maxTokens: number, free: number): number {
    const size = this.context.contextSize;
    const room = size - free - promptLength;
    if (room < 0)
      throw new EngineFailure(
        "context_length_exceeded",
        `The prompt has ${promptLength} tokens, but the model's context holds ${size} tokens, so a prompt ` +
          `can have at most ${size - free} (leaving room for the answer). Shorten the prompt.`,
      );
    // The generation loop stops at maxTokens before it would shift a full context: the answer
    // can use every token up to the context's end.
    return Math.min(maxTokens, size - promptLength);
  }

  /**
   * The grammar of a json / jsonSchema answer (none without). Throws EngineFailure
   * ("invalid_request") for a schema node-llama-cpp cannot turn into a grammar, and for json or
   * jsonSchema together with tools or each other (one generation has one grammar).
   */
  private async grammarFor(options: GenerateOptions, tools: boolean): Promise<LlamaGrammar | undefined> {
    const conflict = grammarProblem({ ...options, tools: tools ? options.tools : undefined });
    if (conflict) throw new EngineFailure("invalid_request", conflict.message);
    if (options.json) return this.model.llama.getGrammarFor("json");
    if (!options.jsonSchema) return undefined;
    const problem = grammarSchemaProblem(options.jsonSchema, "jsonSchema");
    if (problem) throw new EngineFailure("invalid_request", problem);
    try {
      return await this.model.llama.createGrammarForJsonSchema(options.jsonSchema as GbnfJsonObjectSchema);
    } catch (error) {
      throw new EngineFailure(
        "invalid_request",
        `jsonSchema cannot be turned into a grammar: ${(error as Error).message}`,
      );
    }
  }

  /**
   * The answer's logprobs (see scoreAnswer), for the tokens whose text `text` is: tokens the
   * model generated outside the text are not scored — a stop string or end-of-generation token
   * after it, and a thought segment before it (a reasoning model's `<think>…</think>`, which
   * LlamaChat keeps out of `response`). The text is found in what the tokens spell; should it
   * not be there as such (a wrapper that rewrites it), the tokens from the first one are taken.
   */
  private async score(
    sequence: LlamaContextSequence,
    promptLength: number,
    generated: readonly Token[],
    text: string,
    top: number,
  ): Promise<TokenLogprob[]> {
    const pieces = generated.map((token) => this.model.detokenize([token]));
    const starts: number[] = [];
    let offset = 0;
    for (const piece of pieces) {
      starts.push(offset);
      offset += piece.length;
    }
    const at = text === "" ? -1 : pieces.join("").indexOf(text);
    const first = Math.max(0, starts.indexOf(at));
    const answer: Token[] = [];
    let length = 0;
    for (let i = first; i < generated.length && length < text.length; i++) {
      answer.push(generated[i]!);
      length += pieces[i]!.length;
    }
    return scoreAnswer(sequence, this.model, promptLength + first, answer, top);
  }

  /**
   * The functions and chat wrapper of a tool turn (none without tools). Throws
   * ToolRequestError for tools the grammar cannot express, a choice naming no tool, or tools
   * together with a JSON schema (node-llama-cpp cannot constrain both at once).
   */
  private toolSetup(options: GenerateOptions): ToolSetup | null {
    if (!options.tools || options.tools.length === 0) return null;
    // The tool rules (names, choice) are toFunctions'; the grammar rule is checked here.
    const conflict = grammarProblem(options);
    if (conflict) throw new ToolRequestError(conflict.message);
    const functions = toFunctions(options.tools, options.toolChoice);
    const wrapper = toolChatWrapper(this.chatWrapper, {
      format: options.toolFormat,
      forced: isForced(options.toolChoice),
      // A named choice narrows the grammar, not the prompt (see ToolWrapperOptions).
      documentedFunctions: typeof options.toolChoice === "object" ? toFunctions(options.tools) : undefined,
    });
    return { functions, wrapper };
  }

  /** Mean-pooled, L2-normalised embeddings under the base model (see Embedder). */
  embed(texts: readonly string[]): Promise<number[][]> {
    return this.embedder.embed(texts);
  }

  /**
   * embed() with each input's token count; throws EngineFailure("context_length_exceeded")
   * naming the first input longer than the embedding context takes (see Embedder.embedCounted).
   * Aborting `signal` stops it between two decodes (EngineFailure "aborted"); `truncate` cuts
   * a long input instead of refusing it.
   */
  embedCounted(texts: readonly string[], signal?: AbortSignal, truncate = false): Promise<EmbedResult> {
    return this.embedder.embedCounted(texts, signal, truncate);
  }

  /** Forget a conversation: its live caches are emptied and never saved again. */
  async forget(sessionKey: string): Promise<void> {
    // A context being replaced would save the conversation's cache after this.
    await this.settled();
    await this.persisting;
    await this.slots.forget(sessionKey);
  }

  /** Save the conversations' states, then free the chats, contexts and model (with it the adapters). */
  async dispose(): Promise<void> {
    await this.settled();
    await this.persisting;
    for (const slot of this.slots.all) await this.save(slot);
    this.slots.dispose();
    await this.embedder.dispose();
    await this.context.dispose();
    await this.model.dispose();
  }

  /**
   * Fill the empty sequence of `slot` from its conversation's saved state, when the state's
   * tokens are (nearly) a prefix of this prompt's: LlamaChat then drops any differing tail (e.g.
   * an answer's last tokens tokenized differently) and evaluates the rest, as with a live cache.
   * A state sharing less than half its tokens with the prompt (an edited conversation) is
   * deleted: after this turn it would be overwritten anyway.
   */
  private async restore(slot: KvSlot, prompt: readonly Token[]): Promise<void> {
    if (!this.states || slot.sessionKey === ANONYMOUS || slot.evaluatedUnder === MIXED) return;
    const paths = this.setPaths.get(slot.evaluatedUnder) ?? [];
    const candidate = await this.states.find(slot.sessionKey, slot.evaluatedUnder, paths);
    if (!candidate) return;
    const shared = sharedPrefix(candidate.tokens, prompt);
    if (shared * 2 < candidate.tokens.length) {
      await this.states.discard(candidate);
      return;
    }
    await this.states.restore(slot.sequence, candidate);
  }

  /**
   * The prompt's tokens as LlamaChat lays them out (without the answer): with a tool turn's
   * wrapper and its functions, whose documentation may be part of the system prompt.
   */
  private promptTokens(
    history: readonly ChatTurn[],
    tools: ToolSetup | null,
    callFormat: ToolCallFormat | undefined,
  ): Token[] {
    const wrapper = tools?.wrapper ?? this.chatWrapper;
    const { contextText } = wrapper.generateContextState({
      chatHistory: toChatHistory(history, callFormat),
      ...(tools ? { availableFunctions: tools.functions } : {}),
    });
    return contextText.tokenize(this.model.tokenizer);
  }

  /** Save a slot's cache if it changed and belongs to one conversation under one set. Never throws. */
  private async save(slot: KvSlot): Promise<void> {
    if (!this.wantsSave(slot)) return;
    const states = this.states!;
    const paths = this.setPaths.get(slot.evaluatedUnder) ?? [];
    if (await states.save(slot.sequence, slot.sessionKey, slot.evaluatedUnder, paths)) slot.dirty = false;
  }

  /** Whether save() would write `slot`'s cache. */
  private wantsSave(slot: KvSlot): boolean {
    return (
      this.states !== null && slot.dirty && slot.sessionKey !== ANONYMOUS && slot.evaluatedUnder !== MIXED
    );
  }
}

/** A running generation's context, sequence and place in the adapter group. */
interface Turn {
  core: ContextCore;
  slot: KvSlot;
  release: () => void;
}

/**
 * A context and what is bound to it (see ModelSession.grow). Once it is replaced by a bigger one
 * its groups are retired: requests that waited on it move to the new one.
 */
interface ContextCore {
  readonly context: LlamaContext;
  readonly slots: KvSlots;
  readonly adapters: LiveAdapters;
  readonly groups: AdapterGroups;
}

/** The options every context of a session is created with, besides its size and sequences. */
type ContextBase = Omit<LlamaContextOptions, "contextSize" | "sequences">;

/**
 * Whether contexts start with one sequence and grow (ModelSession.grow): on unless
 * MACARON_ENGINE_KV_GROWTH is "0"/"off" (then every sequence is allocated at load).
 */
function kvGrowth(): boolean {
  return !switchedOff(process.env.MACARON_ENGINE_KV_GROWTH);
}

/** A tool turn's functions and the chat wrapper that lays it out. */
interface ToolSetup {
  functions: ChatModelFunctions;
  wrapper: ChatWrapper;
}

/**
 * The identity a model's chat format is kept under: the file (path, size, mtime) and the engine
 * build, whose node-llama-cpp resolves it.
 */
async function chatFormatIdentity(path: string, backend: LlamaBackend): Promise<string> {
  const { repo, release } = backend.llama.llamaCppRelease;
  return JSON.stringify(await KvStateStore.identify(path, `${repo}@${release}/${backend.llama.buildType}`));
}

/**
 * What must match for a saved state to be loadable: llama.cpp build, backend, flash attention
 * (it changes the V cache layout) and the KV cache types.
 */
function engineIdentity(
  backend: LlamaBackend,
  flashAttention: boolean | "auto",
  kv: { key: string; value: string },
): string {
  const { repo, release } = backend.llama.llamaCppRelease;
  const fa = `fa-${String(flashAttention)}`;
  // F16 caches keep the identity they had before the KV type was a setting.
  const kvTypes = kv.key === "F16" && kv.value === "F16" ? "" : `/kv-${kv.key}-${kv.value}`;
  return `${repo}@${release}/${backend.llama.buildType}/${backend.gpu ?? "cpu"}/${fa}${kvTypes}`;
}

/** Block size of the q8_0/q4_0 formats: a quantized K cache needs head sizes divisible by it. */
const QUANT_BLOCK = 32;

/** llama.cpp refuses a quantized KV cache with only "Failed to create context": say why. */
function assertKvCacheFits(model: LlamaModel, kvCacheType: KvCacheType): void {
  if (kvCacheType === "f16") return;
  const metadata = model.fileInfo.metadata as unknown as Record<string, Record<string, unknown> | undefined>;
  const arch = metadata[String(model.fileInfo.metadata.general.architecture)];
  const keyLength = headSizeOf(arch);
  if (keyLength !== null && keyLength % QUANT_BLOCK !== 0) {
    throw new ModelLoadError(
      `A ${kvCacheType} KV cache needs attention heads whose size is a multiple of ${QUANT_BLOCK}; ` +
        `this model's are ${keyLength}. Use the f16 KV cache.`,
    );
  }
}

/**
 * The sequences of a load that names none and has no MACARON_ENGINE_SEQUENCES: up to
 * DEFAULT_SEQUENCES, as the memory free now allows (fittingSequences). A header node-llama-cpp
 * cannot estimate leaves DEFAULT_SEQUENCES: the context's creation falls back to 1 when short.
 */
async function defaultSequences(
  backend: LlamaBackend,
  path: string,
  options: { contextSize?: number; flashAttention: boolean | "auto"; kvCacheType: KvCacheType },
): Promise<number> {
  try {
    const insights = await GgufInsights.from(await readFileInfo({ path }), backend.llama);
    const free = await machineMemory(backend.llama, backend.gpu);
    return await fittingSequences(insights, backend.gpu, { ...options, max: DEFAULT_SEQUENCES }, free);
  } catch (error) {
    process.stderr.write(
      `[engine] no memory estimate for ${basename(path)} (${String(error)}); ${DEFAULT_SEQUENCES} sequences\n`,
    );
    return DEFAULT_SEQUENCES;
  }
}

/**
 * The model's GPU layers option: "auto" leaves room for the context that will be created (its
 * default size read from the GGUF header when none is asked for). On CPU llama.cpp takes 0.
 */
async function modelGpuLayers(
  path: string,
  options: ContextOptions,
  sequences: number,
  gpu: string | null,
): Promise<"max" | number | { fitContext: { contextSize: number } } | "auto"> {
  const setting = options.gpuLayers ?? "auto";
  if (setting !== "auto" || gpu === null) return setting;
  let contextSize = options.contextSize;
  if (contextSize === undefined) {
    const info = await readGgufFileInfo(path, { readTensorInfo: false, logWarnings: false }).catch(
      () => null,
    );
    const arch = info ? String(info.metadata.general.architecture) : "";
    const train = Number(
      (info?.metadata as Record<string, { context_length?: unknown }> | undefined)?.[arch]?.context_length,
    );
    if (!Number.isFinite(train) || train <= 0) return "auto";
    contextSize = defaultContextSize(train);
  }
  return { fitContext: { contextSize: contextSize * sequences } };
}

function flashAttentionName(value: boolean | "auto"): LoadedSettings["flashAttention"] {
  if (value === "auto") return "auto";
  return value ? "on" : "off";
}

/**
 * Which of the request's stop strings ended the answer (Anthropic's `stop_sequence`):
 * node-llama-cpp reports the trigger that matched, as the parts it was given.
 */
function stopSequenceOf(
  metadata: { stopReason: string; customStopTrigger?: readonly (string | Token)[] } | undefined,
  stop: readonly string[] | undefined,
): { stopSequence?: string } {
  if (metadata?.stopReason !== "customStopTrigger" || !metadata.customStopTrigger || !stop) return {};
  const text = metadata.customStopTrigger.filter((part) => typeof part === "string").join("");
  return stop.includes(text) ? { stopSequence: text } : {};
}

function toStopReason(
  reason:
    | LlamaChatResponse<ChatModelFunctions>["metadata"]["stopReason"]
    | LlamaCompletionResponse["metadata"]["stopReason"],
): GenerateResult["stopReason"] {
  switch (reason) {
    case "maxTokens":
      return "maxTokens";
    case "abort":
      return "abort";
    case "customStopTrigger":
      return "stop";
    default:
      return "eos";
  }
}

/** Check existence and the GGUF magic first: llama.cpp's own errors for these are vague. */
async function assertGgufFile(path: string): Promise<void> {
  let magic: string;
  try {
    const handle = await open(path, "r");
    try {
      const { buffer, bytesRead } = await handle.read(Buffer.alloc(4), 0, 4, 0);
      magic = buffer.subarray(0, bytesRead).toString("latin1");
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new ModelLoadError(`Model file not found: ${path}`);
    if (code === "EISDIR") throw new ModelLoadError(`Expected a .gguf model file but got a folder: ${path}`);
    if (code === "EACCES") throw new ModelLoadError(`No permission to read the model file: ${path}`);
    throw new ModelLoadError(`Could not read the model file ${path}: ${(error as Error).message}`);
  }
  if (magic !== "GGUF") {
    throw new ModelLoadError(`${basename(path)} is not a GGUF model file (it does not start with "GGUF").`);
  }
}

function describeLoadFailure(name: string, step: string, error: unknown): string {
  if (error instanceof InsufficientMemoryError) {
    return `Not enough memory to ${step} ${name}. Try a smaller model or a smaller context size.`;
  }
  const message = error instanceof Error ? error.message : String(error);
  return `Could not ${step} ${name}: ${message}`;
}
