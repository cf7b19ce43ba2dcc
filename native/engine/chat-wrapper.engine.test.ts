import { join } from "node:path";
import {
  ChatMLChatWrapper,
  Gemma4ChatWrapper,
  JinjaTemplateChatWrapper,
  QwenChatWrapper,
  resolveChatWrapper,
  type ChatWrapper,
  type LlamaModel,
  type Token,
  type Tokenizer,
} from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFixtures } from "../gguf/fixtures";
import { tinyModelSpec } from "../gguf/tiny-model";
import { QWEN_ARCHITECTURES } from "../gguf/tiny-qwen";
import { gv, writeGguf } from "../gguf/writer";
import { sameLayout } from "./chat-format-cache";
import { chooseChatWrapper, rememberingTokenizer, templateHint } from "./chat-wrapper";
import { loadLlamaBackend, type LlamaBackend } from "./llama-backend";
import { suiteDir } from "../../testing/core/temp-dir";

// chooseChatWrapper is node-llama-cpp's resolution with a tokenizer that remembers its answers
// while it runs: the same wrapper, on the tiny fixtures' real templates and a template no
// specialized wrapper matches.
const dir = suiteDir("macaron-chat-wrapper-");
let backend: LlamaBackend;
const models: Record<"chatml" | "qwen" | "custom" | "broken", LlamaModel> = {} as never;

/**
 * A broken template (it fails node-llama-cpp's sanity test) with Gemma 4's markers, under a name
 * that names no wrapper: node-llama-cpp falls back on the names, then on the markers (Gemma 4).
 */
const BROKEN_TEMPLATE =
  "{% for message in messages %}{{ '<|turn>' + message['role'] + '<|tool_call>call:' }}{% endfor %}" +
  "{% if add_generation_prompt %}";

/** A template of its own: node-llama-cpp keeps it as a Jinja template wrapper. */
const CUSTOM_TEMPLATE =
  "{% for message in messages %}{{ '### ' + message['role'] | upper + ' >>\\n' + message['content'] + " +
  "'\\n<<<\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '### ASSISTANT >>\\n' }}{% endif %}";

beforeAll(async () => {
  backend = await loadLlamaBackend(1);
  const llamaFx = await writeFixtures(dir.path);
  const qwenFx = await writeFixtures(dir.path, { architecture: QWEN_ARCHITECTURES[0] });
  const spec = tinyModelSpec("tiny");
  const custom = join(dir.path, "custom-template.gguf");
  await writeGguf(custom, {
    ...spec,
    metadata: { ...spec.metadata, "tokenizer.chat_template": gv.str(CUSTOM_TEMPLATE) },
  });
  models.chatml = await backend.llama.loadModel({ modelPath: llamaFx.basePath });
  models.qwen = await backend.llama.loadModel({ modelPath: qwenFx.basePath });
  models.custom = await backend.llama.loadModel({ modelPath: custom });
  const broken = join(dir.path, "broken-turns.gguf");
  await writeGguf(broken, {
    ...spec,
    metadata: { ...spec.metadata, "tokenizer.chat_template": gv.str(BROKEN_TEMPLATE) },
  });
  models.broken = await backend.llama.loadModel({ modelPath: broken });
});

afterAll(async () => {
  for (const model of Object.values(models)) await model?.dispose();
  await backend?.llama.dispose();
});

describe("chooseChatWrapper", () => {
  it.each([
    ["chatml", ChatMLChatWrapper],
    ["qwen", QwenChatWrapper],
    ["custom", JinjaTemplateChatWrapper],
    // Hinted, node-llama-cpp's fallback on the names would meet the hint first ("gemma" in
    // "gemma4"): a broken template is resolved without it.
    ["broken", Gemma4ChatWrapper],
  ] as const)("picks what resolveChatWrapper picks for the %s template", (name, Wrapper) => {
    const model = models[name];
    const chosen = chooseChatWrapper(model);
    const resolved = resolveChatWrapper(model);
    expect(chosen).toBeInstanceOf(Wrapper);
    expect(resolved).toBeInstanceOf(Wrapper);
    expect(sameLayout(chosen, resolved)).toBe(true);
  });

  it("a Jinja template's wrapper lays out texts unseen by the resolution as node-llama-cpp's", () => {
    const model = models.custom;
    const layout = (wrapper: ChatWrapper) => {
      const history = [{ type: "user" as const, text: "an unseen text, once" }];
      const { contextText } = wrapper.generateContextState({ chatHistory: history });
      return model.detokenize(contextText.tokenize(model.tokenizer), true);
    };
    const text = layout(chooseChatWrapper(model));
    expect(text).toContain("### USER >>\nan unseen text, once\n<<<\n");
    expect(text).toBe(layout(resolveChatWrapper(model)));
  });
});

describe("rememberingTokenizer", () => {
  /** A tokenizer that counts its calls: each character's code, shifted by the flags. */
  function counting() {
    const calls: string[] = [];
    const tokenize = ((text: string, special?: boolean) => {
      calls.push(text);
      return [...text].map((c) => (c.charCodeAt(0) + (special ? 1000 : 0)) as Token);
    }) as unknown as Tokenizer;
    Object.assign(tokenize, {
      detokenize: () => "",
      isSpecialToken: () => false,
      isEogToken: (token: Token) => token === 7,
    });
    return { tokenize, calls };
  }

  it("tokenizes each text and flags once until forget(), then every time", () => {
    const inner = counting();
    const remembering = rememberingTokenizer(inner.tokenize);
    expect(remembering.tokenize("ab")).toEqual([97, 98]);
    expect(remembering.tokenize("ab")).toEqual([97, 98]);
    expect(remembering.tokenize("ab", true)).toEqual([1097, 1098]);
    expect(inner.calls).toEqual(["ab", "ab"]);
    remembering.forget();
    remembering.tokenize("ab");
    expect(inner.calls).toEqual(["ab", "ab", "ab"]);
    expect([
      remembering.tokenize.isEogToken(7 as Token),
      remembering.tokenize.isEogToken(8 as Token),
    ]).toEqual([true, false]);
  });

  it("hands each caller its own tokens", () => {
    const remembering = rememberingTokenizer(counting().tokenize);
    remembering.tokenize("ab").push(0 as Token);
    expect(remembering.tokenize("ab")).toEqual([97, 98]);
  });
});

describe("templateHint", () => {
  const model = (name: string | undefined, template: string | undefined, filename = "model.gguf") =>
    ({
      filename,
      fileInfo: { metadata: { general: { name }, tokenizer: { chat_template: template } } },
    }) as unknown as LlamaModel;
  const chatml = "{{ '<|im_start|>' + message['role'] }}";

  it("ranks the wrapper a template's markers point to first when neither name ranks one", () => {
    expect(templateHint(model("Macaron demo", chatml))).toBe("chatML");
    expect(templateHint(model(undefined, "{{ '[INST] ' + content }}"))).toBe("llama2Chat");
    expect(templateHint(model("x", "<start_of_turn>user"))).toBe("gemma");
  });

  it("leaves node-llama-cpp's order where a name ranks a wrapper, or no marker is known", () => {
    expect(templateHint(model("Qwen2.5 0.5B Instruct", chatml))).toBeNull();
    expect(templateHint(model("x", chatml, "Mistral-7B.Q4_K_M.gguf"))).toBeNull();
    expect(templateHint(model("gpt-oss-20b", chatml))).toBeNull();
    expect(templateHint(model("x", "<|start_header_id|>user<|end_header_id|>"))).toBeNull();
    expect(templateHint(model("x", CUSTOM_TEMPLATE))).toBeNull();
    expect(templateHint(model("x", undefined))).toBeNull();
  });

  it("makes the fixtures' resolution cheaper: the ChatML fixture is hinted, the Qwen one is named", () => {
    expect(templateHint(models.chatml)).toBe("chatML");
    expect(templateHint(models.qwen)).toBeNull();
  });
});
