/**
 * The Tall base's architecture path in miniature, in the real engine (node-llama-cpp): the tiny
 * qwen3 and qwen3moe bases (native/gguf/tiny-qwen.ts) load and generate through ModelSession
 * with the chat wrapper node-llama-cpp resolves for Qwen3's template, answers end at
 * <|im_end|>, their adapters (demo markers, attention-only q/v, LoRA on experts) hot-swap on
 * the live context, adapters for another architecture or expert count are refused with the
 * reason, and embeddings work.
 */
import { join } from "node:path";
import { QwenChatWrapper } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFixtures, type FixturePaths } from "../gguf/fixtures";
import { randomValues } from "../gguf/prng";
import {
  QWEN_ARCHITECTURES,
  qwenAdapterSpec,
  qwenAttentionAdapterSpec,
  qwenStopAdapterSpec,
  TINY_QWEN_SHAPES,
  type QwenArchitecture,
} from "../gguf/tiny-qwen";
import { writeGguf } from "../gguf/writer";
import { chooseChatWrapper } from "./chat-wrapper";
import { toChatHistory } from "./history";
import { AdapterError, adapterSetKey } from "./live-adapters";
import { loadLlamaBackend, type LlamaBackend } from "./llama-backend";
import { ModelSession } from "./model-session";
import type { AdapterUse, ChatTurn, KvPolicy } from "../../common/engine-protocol";
import { suiteDir } from "../../testing/core/temp-dir";

const dir = suiteDir("macaron-qwen-engine-");
let backend: LlamaBackend;
let llamaFixtures: FixturePaths;
const qwenFixtures: Partial<Record<QwenArchitecture, FixturePaths>> = {};

beforeAll(async () => {
  llamaFixtures = await writeFixtures(dir.path);
  for (const arch of QWEN_ARCHITECTURES)
    qwenFixtures[arch] = await writeFixtures(dir.path, { architecture: arch });
  backend = await loadLlamaBackend(1);
});

afterAll(async () => {
  await backend?.llama.dispose();
});

const hello: ChatTurn[] = [{ role: "user", text: "hello there" }];
const PRINTABLE = /^[\x20-\x7e]+$/;

describe.each(QWEN_ARCHITECTURES)("the tiny %s base in the engine", (arch) => {
  let fx: FixturePaths;
  let session: ModelSession;
  let attention: string;
  let stop: string;
  const use = (id: string, scale = 1): AdapterUse => ({
    path: fx.adapters.find((a) => a.id === id)!.path,
    scale,
  });
  const generate = (history: ChatTurn[], adapters: AdapterUse[], kvPolicy?: KvPolicy, maxTokens = 8) =>
    session.generate(
      history,
      { temperature: 0, maxTokens, adapters, kvPolicy },
      () => {},
      new AbortController().signal,
    );

  beforeAll(async () => {
    fx = qwenFixtures[arch]!;
    attention = join(dir.path, `attention-${arch}.gguf`);
    await writeGguf(attention, qwenAttentionAdapterSpec(arch));
    stop = join(dir.path, `stop-${arch}.gguf`);
    await writeGguf(stop, qwenStopAdapterSpec(arch));
    session = await ModelSession.open(backend, fx.basePath, { contextSize: 1024 }, () => {});
  });
  afterAll(async () => {
    await session?.dispose();
  });

  it("gets Qwen's chat wrapper, which lays turns out as Qwen3's template does", () => {
    const wrapper = chooseChatWrapper(session.model);
    expect(wrapper).toBeInstanceOf(QwenChatWrapper);
    const history: ChatTurn[] = [
      { role: "system", text: "Be brief." },
      { role: "user", text: "hi" },
      { role: "assistant", text: "hello" },
      { role: "user", text: "how are you?" },
    ];
    const { contextText } = wrapper.generateContextState({ chatHistory: toChatHistory(history) });
    const text = session.model.detokenize(contextText.tokenize(session.model.tokenizer), true);
    expect(text).toBe(
      "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n" +
        "<|im_start|>assistant\nhello<|im_end|>\n<|im_start|>user\nhow are you?<|im_end|>\n" +
        "<|im_start|>assistant\n",
    );
    expect(session.info.trainContextSize).toBe(TINY_QWEN_SHAPES[arch].contextLength);
  });

  it("generates printable text, each demo adapter's marker with it, and the base again without", async () => {
    const base = await generate(hello, []);
    expect(base.stopReason).toBe("maxTokens");
    expect(base.text).toMatch(PRINTABLE);
    expect(base.text).not.toMatch(/^(.)\1+$/);
    expect((await generate(hello, [use("chat")])).text).toBe("cccccccc");
    expect((await generate(hello, [use("coding")])).text).toBe("{{{{{{{{");
    expect((await generate(hello, [use("agent")])).text).toBe("aaaaaaaa");
    expect((await generate(hello, [use("ui")])).text).toBe("uuuuuuuu");
    expect((await generate(hello, [])).text).toBe(base.text);
  });

  it.each<KvPolicy>(["reevaluate", "sequence-per-set", "activated"])(
    "hot-swaps an attention-only (q/v) adapter on the live context (%s)",
    async (policy) => {
      const qv: AdapterUse[] = [{ path: attention, scale: 1 }];
      const base = (await generate(hello, [], policy, 16)).text;
      const tuned = (await generate(hello, qv, policy, 16)).text;
      expect(tuned).toMatch(PRINTABLE);
      expect(tuned).not.toBe(base);
      expect(session.adapters.key).toBe(adapterSetKey(qv));
      // Half the scale is a different model again; none is the base, exactly.
      const half = (await generate(hello, [{ path: attention, scale: 0.5 }], policy, 16)).text;
      expect(half).not.toBe(tuned);
      expect((await generate(hello, [], policy, 16)).text).toBe(base);
      expect((await generate(hello, qv, policy, 16)).text).toBe(tuned);
      // Switching inside one conversation: the second turn under q/v, the third without.
      const turn1 = await generate(hello, [], policy);
      const history2: ChatTurn[] = [
        ...hello,
        { role: "assistant", text: turn1.text },
        { role: "user", text: "and?" },
      ];
      const under = (await generate(history2, qv, policy)).text;
      expect(under).not.toBe((await generate(history2, [], policy)).text);
      expect((await generate(history2, qv, policy)).text).toBe(under);
    },
  );

  it("ends the answer at <|im_end|> (EOS), which never shows in the text", async () => {
    const answers = [];
    for (const text of ["hi", "Write a poem about cats", "hello there", "What is 2+2?"]) {
      const result = await generate([{ role: "user", text }], [{ path: stop, scale: 1 }], undefined, 48);
      answers.push(result);
      expect(result.stopReason).toBe("eos");
      expect(result.tokens).toBeLessThan(48);
      expect(result.text).not.toContain("<|im_end|>");
    }
    console.log(`${arch} stop adapter answers: ${JSON.stringify(answers.map((a) => a.text))}`);
    // Some answers have text before the turn ends.
    expect(answers.some((a) => a.text.length > 0 && PRINTABLE.test(a.text))).toBe(true);
    // Without the adapter the same prompts run to maxTokens: the stop is the model's choice.
    expect((await generate([{ role: "user", text: "hi" }], [], undefined, 48)).stopReason).toBe("maxTokens");
  });

  it("refuses a llama adapter and the other qwen architecture's adapter, naming both, and keeps working", async () => {
    const before = (await generate(hello, [use("coding")])).text;
    const llamaAdapter = llamaFixtures.adapters[0]!.path;
    const error = await generate(hello, [use("chat"), { path: llamaAdapter, scale: 1 }]).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AdapterError);
    expect((error as Error).message).toContain(
      `was made for the llama architecture, but the loaded model is ${arch}.`,
    );
    const other = arch === "qwen3" ? "qwen3moe" : "qwen3";
    const otherAdapter = qwenFixtures[other]!.adapters[0]!.path;
    await expect(generate(hello, [{ path: otherAdapter, scale: 1 }])).rejects.toThrow(
      `was made for the ${other} architecture, but the loaded model is ${arch}.`,
    );
    // The failed requests changed nothing.
    expect(session.adapters.key).toBe(adapterSetKey([use("coding")]));
    expect((await generate(hello, [use("coding")])).text).toBe(before);
  });

  it("embeds texts with mean pooling: unit vectors, alike texts closer than unrelated ones", async () => {
    const [a, b, c] = await session.embed([
      "How are you today?",
      "How are you doing today?",
      "Write a TypeScript function that sorts an array.",
    ]);
    const dot = (x: number[], y: number[]) => x.reduce((s, v, i) => s + v * y[i]!, 0);
    expect(a).toHaveLength(64);
    expect(dot(a!, a!)).toBeCloseTo(1, 5);
    console.log(
      `${arch} embeddings: cos(alike) ${dot(a!, b!).toFixed(3)}, cos(unrelated) ${dot(a!, c!).toFixed(3)}`,
    );
    expect(dot(a!, b!)).toBeGreaterThan(dot(a!, c!) + 0.2);
  });
});

describe("LoRA on the tiny qwen3moe base's experts", () => {
  let session: ModelSession;
  const generate = (adapters: AdapterUse[], maxTokens = 16) =>
    session.generate(hello, { temperature: 0, maxTokens, adapters }, () => {}, new AbortController().signal);

  beforeAll(async () => {
    session = await ModelSession.open(
      backend,
      qwenFixtures.qwen3moe!.basePath,
      { contextSize: 512 },
      () => {},
    );
  });
  afterAll(async () => {
    await session?.dispose();
  });

  it("applies LoRA on expert tensors, and refuses one for another expert count before llama.cpp sees it", async () => {
    // llama.cpp does not check the expert dimension: with such an adapter the process dies of
    // SIGSEGV while generating (ARCHITECTURE.md).
    const shape = TINY_QWEN_SHAPES.qwen3moe;
    const expertLora = async (experts: number) => {
      const path = join(dir.path, `experts-${experts}.gguf`);
      const E = shape.embedding;
      const FF = shape.expertFeedForward;
      const a = randomValues(`a${experts}`, E * 2 * experts, 0.2);
      for (let i = 0; i < a.length; i += E) a[i] = 0;
      await writeGguf(
        path,
        qwenAdapterSpec(
          "qwen3moe",
          "expert LoRA (test)",
          [
            { name: "blk.0.ffn_up_exps.weight.lora_a", dims: [E, 2, experts], type: "F32", data: a },
            {
              name: "blk.0.ffn_up_exps.weight.lora_b",
              dims: [2, FF, experts],
              type: "F32",
              data: randomValues(`b${experts}`, 2 * FF * experts, 1),
            },
          ],
          2,
        ),
      );
      return path;
    };
    const base = (await generate([])).text;
    const fits = await expertLora(shape.experts);
    expect((await generate([{ path: fits, scale: 1 }])).text).not.toBe(base);
    const wrong = await expertLora(shape.experts - 1);
    await expect(generate([{ path: wrong, scale: 1 }])).rejects.toThrow(
      `blk.0.ffn_up_exps.weight is [64, ${shape.expertFeedForward}, 4] in the model but [64, ${shape.expertFeedForward}, 3] in the adapter`,
    );
    expect((await generate([])).text).toBe(base);
  });
});
