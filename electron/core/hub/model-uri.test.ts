/** `--model` URI forms: parsing, and the downloads behind them against the loopback hub. */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEMO_REPO, SPLIT_REPO, type HubServer } from "../../../testing/hub/hf-hub-server";
import { useTestHub } from "../../../testing/hub/test-hub";
import { testDir } from "../../../testing/core/temp-dir";
import { isModelUri, parseHubUri, resolveModelArg } from "./model-uri";

let hub: HubServer;

useTestHub((h) => (hub = h));

const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

describe("--model URIs", () => {
  it("parses node-llama-cpp's forms", () => {
    expect(isModelUri("/models/a.gguf")).toBe(false);
    expect(isModelUri("hf:a/b")).toBe(true);
    expect(parseHubUri("hf:Qwen/Qwen3-8B-GGUF:Q4_K_M")).toEqual({
      repo: "Qwen/Qwen3-8B-GGUF",
      file: null,
      tag: "Q4_K_M",
    });
    expect(parseHubUri("hf:Qwen/Qwen3-8B-GGUF")).toEqual({
      repo: "Qwen/Qwen3-8B-GGUF",
      file: null,
      tag: "latest",
    });
    expect(parseHubUri("hf:user/repo/sub/m-Q8_0.gguf#main")).toEqual({
      repo: "user/repo",
      file: "sub/m-Q8_0.gguf",
      tag: "latest",
    });
    expect(parseHubUri("huggingface:user/repo:q8_0")).toMatchObject({ repo: "user/repo", tag: "q8_0" });
    expect(parseHubUri("https://huggingface.co/user/repo/resolve/main/m.gguf?download=true")).toEqual({
      repo: "user/repo",
      file: "m.gguf",
      tag: "latest",
    });
    expect(parseHubUri("https://huggingface.co/user/repo/blob/main/a%20b.gguf")).toMatchObject({
      file: "a b.gguf",
    });
    expect(parseHubUri("https://example.com/m.gguf")).toBeNull();
    expect(() => parseHubUri("hf:nope")).toThrow(/expected hf:OWNER\/REPO/);
  });

  it("a plain path is kept; hf: tags and resolve URLs download into models/OWNER/REPO", async () => {
    const dataDir = testDir("macaron-uri-");
    expect(await resolveModelArg("/some/model.gguf", { dataDir })).toBe("/some/model.gguf");
    const lines: string[] = [];
    const path = await resolveModelArg(`hf:${SPLIT_REPO}`, {
      dataDir,
      endpoint: hub.url,
      onLine: (l) => lines.push(l),
    });
    expect(path).toBe(
      join(dataDir, "models", "macaron-test", "split-tiny-GGUF", "split-tiny-Q8_0-00001-of-00002.gguf"),
    );
    expect(lines.at(-1)).toBe(
      `download hf:${SPLIT_REPO}/split-tiny-Q8_0-00001-of-00002.gguf: done (${path})`,
    );
    const url = hub.fileUrl(DEMO_REPO, "demo-chat-F32.gguf");
    expect(await resolveModelArg(url, { dataDir, endpoint: hub.url })).toBe(
      join(dataDir, "models", "macaron-test", "demo-chat-GGUF", "demo-chat-F32.gguf"),
    );
  });

  it("downloads a URL off the hub as is (node-llama-cpp's downloader), and says why a tag is missing", async () => {
    const dataDir = testDir("macaron-uri-");
    const url = hub.fileUrl(DEMO_REPO, "demo-chat-Q8_0.gguf");
    // With the public hub as the endpoint, the loopback URL is just a URL.
    const path = await resolveModelArg(url, { dataDir, endpoint: "https://huggingface.co" });
    expect(path).toBe(join(dataDir, "models", "urls", "demo-chat-Q8_0.gguf"));
    expect(sha(path)).toBe(sha(hub.repos.find((r) => r.id === DEMO_REPO)!.files[1]!.source));
    await expect(resolveModelArg(`hf:${DEMO_REPO}:Q2_K`, { dataDir, endpoint: hub.url })).rejects.toThrow(
      /has no Q2_K GGUF file/,
    );
  });
});
