import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  ChatMLChatWrapper,
  GeneralChatWrapper,
  Llama3_1ChatWrapper,
  QwenChatWrapper,
  type LlamaModel,
} from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFixtures } from "../gguf/fixtures";
import { QWEN_ARCHITECTURES } from "../gguf/tiny-qwen";
import { cachedChatWrapper, sameLayout } from "./chat-format-cache";
import { chooseChatWrapper } from "./chat-wrapper";
import { loadLlamaBackend, type LlamaBackend } from "./llama-backend";
import { suiteDir } from "../../testing/core/temp-dir";

// The chat format kept across starts, on the tiny fixtures' real templates.
const dir = suiteDir("macaron-chat-format-");
let backend: LlamaBackend;
let chatml: LlamaModel;
let qwen: LlamaModel;

beforeAll(async () => {
  backend = await loadLlamaBackend(1);
  const llamaFx = await writeFixtures(dir.path);
  const qwenFx = await writeFixtures(dir.path, { architecture: QWEN_ARCHITECTURES[0] });
  chatml = await backend.llama.loadModel({ modelPath: llamaFx.basePath });
  qwen = await backend.llama.loadModel({ modelPath: qwenFx.basePath });
});

afterAll(async () => {
  await chatml?.dispose();
  await qwen?.dispose();
  await backend?.llama.dispose();
});

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
