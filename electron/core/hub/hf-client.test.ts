/** HubClient against the loopback hub, and its parsing of real hub names and answers. */
import { createServer, type AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import {
  ADAPTER_REPO,
  DEMO_REPO,
  GATED_REPO,
  NO_GGUF_REPO,
  PEFT_REPO,
  SPLIT_REPO,
  type HubServer,
} from "../../../testing/hub/hf-hub-server";
import { useTestHub } from "../../../testing/hub/test-hub";
import {
  baseModelOf,
  groupGgufFiles,
  groupPeftFolders,
  HubClient,
  hubEndpoint,
  parseQuant,
  splitPartPaths,
} from "./hf-client";
import { ggufNames } from "./gguf-names";

let hub: HubServer;
const names = await ggufNames();

useTestHub((h) => (hub = h));

const client = (token: string | null = null) =>
  new HubClient({ endpoint: hub.url, token: () => Promise.resolve(token) });

describe("hub names", () => {
  it("parses the quantization from real file names", () => {
    expect(parseQuant("Qwen3-30B-A3B-Q4_K_M.gguf", names)).toBe("Q4_K_M");
    expect(parseQuant("qwen2.5-1.5b-instruct-q4_k_m.gguf", names)).toBe("Q4_K_M");
    expect(parseQuant("Meta-Llama-3.1-8B-Instruct-Q8_0.gguf", names)).toBe("Q8_0");
    expect(parseQuant("Q4_K_M/Qwen3-235B-A22B-Q4_K_M-00001-of-00003.gguf", names)).toBe("Q4_K_M");
    expect(parseQuant("gemma-3-27b-it-UD-Q4_K_XL.gguf", names)).toBe("Q4_K_XL");
    expect(parseQuant("model-bf16.gguf", names)).toBe("BF16");
    expect(parseQuant("ggml-model-f16.gguf", names)).toBe("F16");
    expect(parseQuant("tinyllama_q5_k_m.gguf", names)).toBe("Q5_K_M");
    expect(parseQuant("adapter.gguf", names)).toBeNull();
  });

  it("groups split parts under the first and leaves incomplete sets out", () => {
    expect(splitPartPaths("a/m-00001-of-00003.gguf")).toEqual([
      "a/m-00001-of-00003.gguf",
      "a/m-00002-of-00003.gguf",
      "a/m-00003-of-00003.gguf",
    ]);
    const lfs = (oid: string, size: number) => ({ oid, size });
    const files = groupGgufFiles(
      [
        { type: "file", path: "m-Q4_K_M-00001-of-00002.gguf", size: 10, lfs: lfs("a", 10) },
        { type: "file", path: "m-Q4_K_M-00002-of-00002.gguf", size: 5, lfs: lfs("b", 5) },
        { type: "file", path: "m-Q8_0-00001-of-00002.gguf", size: 10 }, // part 2 missing
        { type: "file", path: "m-F16.gguf", size: 30, lfs: lfs("c", 30) },
        { type: "file", path: "mmproj-lora-F16.gguf", size: 1 },
        { type: "file", path: "README.md", size: 3 },
        { type: "directory", path: "sub" },
      ],
      names,
    );
    expect(files.map((f) => [f.path, f.quant, f.sizeBytes, f.parts.length, f.isAdapter])).toEqual([
      ["mmproj-lora-F16.gguf", "F16", 1, 1, true],
      ["m-Q4_K_M-00001-of-00002.gguf", "Q4_K_M", 15, 2, false],
      ["m-F16.gguf", "F16", 30, 1, false],
    ]);
    expect(files[1]!.parts.map((p) => p.sha256)).toEqual(["a", "b"]);
  });

  it("reads the base model from card data or tags, and the endpoint from HF_ENDPOINT", () => {
    expect(baseModelOf({ cardData: { base_model: ["Qwen/Qwen3-8B"] } })).toBe("Qwen/Qwen3-8B");
    expect(
      baseModelOf({ tags: ["gguf", "base_model:quantized:Qwen/Qwen3-8B", "base_model:Qwen/Qwen3-8B"] }),
    ).toBe("Qwen/Qwen3-8B");
    expect(baseModelOf({ tags: ["gguf"] })).toBeNull();
    expect(hubEndpoint({ HF_ENDPOINT: "http://127.0.0.1:9/" })).toBe("http://127.0.0.1:9");
    expect(hubEndpoint({})).toBe("https://huggingface.co");
  });
});

describe("PEFT folders in a repo's tree", () => {
  it("pairs adapter_config.json with adapter_model.safetensors at the root or one folder down", () => {
    const file = (path: string, lfs = false) => ({
      type: "file",
      path,
      size: 10,
      oid: "b".repeat(40),
      ...(lfs ? { lfs: { oid: "a".repeat(64), size: 1000 } } : {}),
    });
    const folders = groupPeftFolders([
      file("zeta/adapter_config.json"),
      file("zeta/adapter_model.safetensors", true),
      file("adapter_config.json"),
      file("adapter_model.safetensors", true),
      file("alpha/adapter_config.json"), // no weights beside it
      file("a/b/adapter_config.json"), // two folders down
      file("a/b/adapter_model.safetensors", true),
      file("../adapter_config.json"),
      file("../adapter_model.safetensors", true),
    ]);
    expect(folders.map((f) => f.dir)).toEqual(["", "zeta"]);
    expect(folders[1]).toEqual({
      dir: "zeta",
      config: { path: "zeta/adapter_config.json", sizeBytes: 10, sha256: null, gitOid: "b".repeat(40) },
      weights: {
        path: "zeta/adapter_model.safetensors",
        sizeBytes: 1000,
        sha256: "a".repeat(64),
        gitOid: null,
      },
    });
  });

  it("lists the test hub's PEFT repo beside its (absent) GGUF files", async () => {
    const listing = await client().repoListing(PEFT_REPO);
    expect(listing.repo.files).toEqual([]);
    expect(listing.peft.map((f) => [f.config.path, f.weights.path])).toEqual([
      ["adapter_config.json", "adapter_model.safetensors"],
      ["v-only/adapter_config.json", "v-only/adapter_model.safetensors"],
    ]);
    expect(listing.peft[0]!.weights.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(listing.peft[0]!.config.gitOid).toMatch(/^[0-9a-f]{40}$/);
  });
});

describe("HubClient", () => {
  it("searches GGUF repos, most downloaded first", async () => {
    const found = await client().search("macaron-test", { limit: 3 });
    expect(found.map((m) => m.repo)).toEqual([DEMO_REPO, "macaron-test/small-chat-GGUF", SPLIT_REPO]);
    expect(found[0]).toMatchObject({
      downloads: 5000,
      likes: 50,
      gated: false,
      baseModel: "macaron-test/demo-chat",
    });
    expect((await client().search("gated")).map((m) => [m.repo, m.gated])).toEqual([[GATED_REPO, true]]);
    expect(await client().search("no-gguf")).toEqual([]); // filter=gguf
    expect(await client().search("nothing-matches-this")).toEqual([]);
  });

  it("lists a repo's GGUF files with sizes and LFS sha256; a repo without GGUF has none", async () => {
    const demo = await client().repo(DEMO_REPO);
    expect(demo).toMatchObject({ repo: DEMO_REPO, gated: false, baseModel: "macaron-test/demo-chat" });
    expect(demo.files.map((f) => f.quant).sort()).toEqual(["F32", "Q8_0"]);
    expect(demo.files[0]!.parts[0]!.sha256).toMatch(/^[0-9a-f]{64}$/);
    const split = await client().repo(SPLIT_REPO);
    expect(split.files).toHaveLength(1);
    expect(split.files[0]!.parts.map((p) => p.path)).toEqual([
      "split-tiny-Q8_0-00001-of-00002.gguf",
      "split-tiny-Q8_0-00002-of-00002.gguf",
    ]);
    expect((await client().repo(ADAPTER_REPO)).files.every((f) => f.isAdapter)).toBe(true);
    expect(await client().repo(NO_GGUF_REPO)).toEqual({
      repo: NO_GGUF_REPO,
      gated: false,
      baseModel: null,
      files: [],
    });
    expect((await client().repo(GATED_REPO)).gated).toBe(true);
  });

  it("resolves hf: tags through the v2 manifest like node-llama-cpp", async () => {
    expect(await client().manifestFile(DEMO_REPO, "Q8_0")).toBe("demo-chat-Q8_0.gguf");
    expect(await client().manifestFile(SPLIT_REPO, "latest")).toBe("split-tiny-Q8_0-00001-of-00002.gguf");
    await expect(client().manifestFile(DEMO_REPO, "Q2_K")).rejects.toThrow(/has no Q2_K GGUF file/);
  });

  it("explains 401/403 (gated), 404, 429, 5xx and an unreachable hub", async () => {
    await expect(client().head(GATED_REPO, "gated-demo-Q8_0.gguf")).rejects.toMatchObject({
      code: "forbidden",
      message: expect.stringMatching(/is gated: it needs a Hugging Face access token/) as unknown,
    });
    await expect(client("hf_other").head(GATED_REPO, "gated-demo-Q8_0.gguf")).rejects.toThrow(
      /token has no access/,
    );
    expect((await client(hub.token).head(GATED_REPO, "gated-demo-Q8_0.gguf")).size).toBeGreaterThan(0);
    await expect(client().repo("macaron-test/missing")).rejects.toMatchObject({
      code: "not_found",
      message: expect.stringMatching(/macaron-test\/missing was not found/) as unknown,
    });
    hub.setFault("/api/models", { kind: "status", status: 429, retryAfterSeconds: 120, times: 1 });
    await expect(client().search("demo")).rejects.toThrow(/rate-limiting requests; try again in 2 min/);
    hub.setFault("/api/models", { kind: "status", status: 502, times: 1 });
    await expect(client().search("demo")).rejects.toThrow(/failed \(HTTP 502\)/);
    expect((await client().search("demo")).length).toBeGreaterThan(0); // healed
    // A port nothing listens on (taken, then freed).
    const port = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, "127.0.0.1", () => {
        const { port } = srv.address() as AddressInfo;
        srv.close(() => resolve(port));
      });
    });
    const offline = new HubClient({ endpoint: `http://127.0.0.1:${port}` });
    await expect(offline.search("x")).rejects.toThrow(
      /Cannot reach the model hub at http:\/\/127\.0\.0\.1:\d+ .*ECONNREFUSED/,
    );
  });
});
