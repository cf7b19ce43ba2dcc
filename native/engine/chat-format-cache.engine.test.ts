import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  ChatMLChatWrapper,
  GeneralChatWrapper,
  Llama3_1ChatWrapper,
  QwenChatWrapper,
  JinjaTemplateChatWrapper,
  type Llama,
  type LlamaModel,
} from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFixtures, type FixturePaths } from "../gguf/fixtures";
import { tinyModelSpec } from "../gguf/tiny-model";
import { gv, writeGguf } from "../gguf/writer";
import { QWEN_ARCHITECTURES } from "../gguf/tiny-qwen";
import { pendingChatFormat, sameLayout } from "./chat-format-cache";
import { chooseChatWrapper } from "./chat-wrapper";
import { loadLlamaBackend, type LlamaBackend } from "./llama-backend";
import { suiteDir } from "../../testing/core/temp-dir";

// The chat format kept across starts, on the tiny fixtures' real templates.
const dir = suiteDir("macaron-chat-format-");
let backend: LlamaBackend;
let chatml: LlamaModel;
let qwen: LlamaModel;
let custom: LlamaModel;
let llamaFx: FixturePaths;
let customPath: string;

/** A template no specialized wrapper matches: node-llama-cpp keeps it as a Jinja wrapper. */
const CUSTOM_TEMPLATE =
  "{% for message in messages %}{{ '### ' + message['role'] + ' >>\\n' + message['content'] + " +
  "'\\n<<<\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '### assistant >>\\n' }}{% endif %}";

beforeAll(async () => {
  backend = await loadLlamaBackend(1);
  llamaFx = await writeFixtures(dir.path);
  const qwenFx = await writeFixtures(dir.path, { architecture: QWEN_ARCHITECTURES[0] });
  chatml = await backend.llama.loadModel({ modelPath: llamaFx.basePath });
  qwen = await backend.llama.loadModel({ modelPath: qwenFx.basePath });
  const spec = tinyModelSpec("tiny");
  customPath = join(dir.path, "custom-template.gguf");
  await writeGguf(customPath, {
    ...spec,
    metadata: { ...spec.metadata, "tokenizer.chat_template": gv.str(CUSTOM_TEMPLATE) },
  });
  custom = await backend.llama.loadModel({ modelPath: customPath });
  paths.set(chatml, llamaFx.basePath).set(qwen, qwenFx.basePath).set(custom, customPath);
});

afterAll(async () => {
  await chatml?.dispose();
  await qwen?.dispose();
  await custom?.dispose();
  await backend?.llama.dispose();
});

/** Each loaded model's file, for the format worked out on its vocabulary. */
const paths = new Map<LlamaModel, string>();

/** The wrapper a load of `model` gets with the cache in `folder` (its load already under way). */
const cachedChatWrapper = (model: LlamaModel, folder: string, identity: string) =>
  pendingChatFormat(model.llama, paths.get(model)!, {
    cache: { dir: folder, identity },
    loadUnderWay: Promise.resolve(),
  }).wrapperFor(model);

const cacheFile = (folder: string) => join(dir.path, folder, "chat-formats.cache");
const entries = async (folder: string) =>
  Object.values(
    (JSON.parse(await readFile(cacheFile(folder), "utf8")) as { entries: Record<string, { type: string }> })
      .entries,
  ).map((e) => e.type);

describe("the chat format kept across starts", () => {
  it("keeps the resolved type, and the next load takes the wrapper from it", async () => {
    const folder = join(dir.path, "kept");
    const first = await cachedChatWrapper(chatml, folder, "model-a");
    expect(first).toBeInstanceOf(ChatMLChatWrapper);
    expect(await entries("kept")).toEqual(["chatML"]);
    expect(await cachedChatWrapper(chatml, folder, "model-a")).toBeInstanceOf(ChatMLChatWrapper);
    // What is kept is what the next load uses (here a wrong type written in by hand).
    const cache = JSON.parse(await readFile(cacheFile("kept"), "utf8")) as {
      entries: Record<string, { type: string }>;
    };
    for (const entry of Object.values(cache.entries)) entry.type = "general";
    await writeFile(cacheFile("kept"), JSON.stringify(cache));
    expect(await cachedChatWrapper(chatml, folder, "model-a")).toBeInstanceOf(GeneralChatWrapper);
    // Another model file (or engine build) is resolved on its own.
    expect(await cachedChatWrapper(chatml, folder, "model-b")).toBeInstanceOf(ChatMLChatWrapper);
  });

  it("loads at once keep every model's format", async () => {
    const folder = join(dir.path, "together");
    await Promise.all(Array.from({ length: 6 }, (_, i) => cachedChatWrapper(chatml, folder, `model-${i}`)));
    expect(await entries("together")).toHaveLength(6);
  });

  it("a garbage cache or an unknown type is resolved again and rewritten", async () => {
    const folder = join(dir.path, "garbage");
    await cachedChatWrapper(chatml, folder, "m");
    await writeFile(cacheFile("garbage"), "{not json");
    expect(await cachedChatWrapper(chatml, folder, "m")).toBeInstanceOf(ChatMLChatWrapper);
    expect(await entries("garbage")).toEqual(["chatML"]);
    const cache = JSON.parse(await readFile(cacheFile("garbage"), "utf8")) as {
      entries: Record<string, { type: string }>;
    };
    for (const entry of Object.values(cache.entries)) entry.type = "constructor";
    await writeFile(cacheFile("garbage"), JSON.stringify(cache));
    expect(await cachedChatWrapper(chatml, folder, "m")).toBeInstanceOf(ChatMLChatWrapper);
    expect(await entries("garbage")).toEqual(["chatML"]);
  });

  it("a wrapper that its type alone lays out the same way is kept; the layout is chooseChatWrapper's", async () => {
    const folder = join(dir.path, "qwen");
    const resolved = chooseChatWrapper(qwen);
    expect(resolved).toBeInstanceOf(QwenChatWrapper);
    const wrapper = await cachedChatWrapper(qwen, folder, "qwen");
    const again = await cachedChatWrapper(qwen, folder, "qwen");
    const layout = (w: typeof resolved) =>
      JSON.stringify(
        w
          .generateContextState({
            chatHistory: [
              { type: "system", text: "Be brief." },
              { type: "user", text: "hi" },
              { type: "model", response: ["hello"] },
              { type: "user", text: "and now?" },
            ],
          })
          .contextText.toJSON(),
      );
    expect(layout(wrapper)).toBe(layout(resolved));
    expect(layout(again)).toBe(layout(resolved));
    expect(await entries("qwen")).toEqual(["qwen"]);
  });

  it("tells apart a wrapper made with settings from its bare type (such a one is never kept)", () => {
    const dated = new Llama3_1ChatWrapper({ todayDate: new Date("2020-01-02"), cuttingKnowledgeDate: null });
    expect(sameLayout(new Llama3_1ChatWrapper(), dated)).toBe(false);
    expect(sameLayout(new ChatMLChatWrapper(), new ChatMLChatWrapper())).toBe(true);
    expect(sameLayout(new ChatMLChatWrapper(), new QwenChatWrapper())).toBe(false);
  });
});

describe("the chat format worked out beside the load", () => {
  /** backend.llama, noting each model it is asked to load (the vocabulary-only ones too). */
  function watched() {
    const loads: { modelPath: string; vocabOnly?: boolean }[] = [];
    const llama = {
      loadModel: (options: { modelPath: string; vocabOnly?: boolean }) => {
        loads.push(options);
        return backend.llama.loadModel(options);
      },
    } as unknown as Llama;
    return { llama, loads };
  }
  /** A load under way at once (its promise already settled). */
  const underWay = Promise.resolve();

  it("resolves on the file's vocabulary once the load is under way, and keeps the type", async () => {
    const folder = join(dir.path, "beside");
    let underWayYet = false;
    const loads: { modelPath: string; vocabOnly?: boolean; underWayYet: boolean }[] = [];
    const llama = {
      loadModel: (options: { modelPath: string; vocabOnly?: boolean }) => {
        loads.push({ ...options, underWayYet });
        return backend.llama.loadModel(options);
      },
    } as unknown as Llama;
    let started = (): void => undefined;
    const loadUnderWay = new Promise<void>((resolve) => (started = resolve));
    const pending = pendingChatFormat(llama, llamaFx.basePath, {
      cache: { dir: folder, identity: "m" },
      loadUnderWay,
    });
    // The cache read (a miss) settles before the load starts.
    await readFile(cacheFile("beside"), "utf8").catch(() => null);
    await new Promise((resolve) => setImmediate(resolve));
    underWayYet = true;
    started();
    await pending.done;
    // Nothing is loaded beside the model before its own load has started.
    expect(loads).toEqual([
      expect.objectContaining({ modelPath: llamaFx.basePath, vocabOnly: true, underWayYet: true }),
    ]);
    const wrapper = await pending.wrapperFor(chatml);
    expect(wrapper).toBeInstanceOf(ChatMLChatWrapper);
    expect(sameLayout(wrapper, chooseChatWrapper(chatml))).toBe(true);
    expect(await entries("beside")).toEqual(["chatML"]);

    // The next load takes it from the cache: no vocabulary loaded.
    const next = watched();
    const again = pendingChatFormat(next.llama, llamaFx.basePath, {
      cache: { dir: folder, identity: "m" },
      loadUnderWay: underWay,
    });
    expect(await again.wrapperFor(chatml)).toBeInstanceOf(ChatMLChatWrapper);
    expect(next.loads).toEqual([]);
  });

  it("a template no specialized wrapper matches is kept as a Jinja template, made again from it", async () => {
    const folder = join(dir.path, "jinja");
    const open = () =>
      pendingChatFormat(watched().llama, customPath, {
        cache: { dir: folder, identity: "custom" },
        loadUnderWay: underWay,
      }).wrapperFor(custom);
    const wrapper = await open();
    expect(wrapper).toBeInstanceOf(JinjaTemplateChatWrapper);
    expect(sameLayout(wrapper, chooseChatWrapper(custom))).toBe(true);
    expect(await entries("jinja")).toEqual(["jinjaTemplate"]);
    const again = await open();
    expect(again).toBeInstanceOf(JinjaTemplateChatWrapper);
    expect(sameLayout(again, wrapper)).toBe(true);
  });

  it("a vocabulary that cannot be loaded costs only the resolution on the loaded model", async () => {
    const garbage = join(dir.path, "garbage.gguf");
    await writeFile(garbage, "not a model");
    const pending = pendingChatFormat(watched().llama, garbage, { cache: null, loadUnderWay: underWay });
    await pending.done;
    expect(await pending.wrapperFor(qwen)).toBeInstanceOf(QwenChatWrapper);
  });
});
