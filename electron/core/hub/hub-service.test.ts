/**
 * hub.* and models.local/models.delete through core's dispatch (fake engine, real files):
 * search, repo files, the curated list, a download with hub.download events, the token (never
 * returned), models.local and models.delete (refuses the loaded model and paths outside
 * models/), adapters for the loaded base (hub metadata, then the remote header's shapes: a
 * GGUF's, or a PEFT folder's config and safetensors header, never its weights) and installing
 * one through the adapter registry (a PEFT folder converted); a hostile hub's PEFT repo is a
 * clear refusal that leaves nothing behind.
 */
import { existsSync } from "node:fs";
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type {
  AdapterInfo,
  Download,
  HubAdapterMatch,
  HubModel,
  HubRepo,
  LocalModel,
  RecommendedModel,
} from "../../api";
import { readGguf } from "../../../native/gguf/reader";
import { startFakeCore } from "../../../testing/core/fake-core";
import {
  ADAPTER_REPO,
  DEMO_REPO,
  NO_GGUF_REPO,
  PEFT_REPO,
  SPLIT_REPO,
  WRONG_ADAPTER_REPO,
  WRONG_PEFT_REPO,
  type Fault,
  type HubServer,
} from "../../../testing/hub/hf-hub-server";
import { useTestHub } from "../../../testing/hub/test-hub";

let hub: HubServer;

useTestHub((h) => (hub = h));

const core = (log?: (message: string) => void) =>
  startFakeCore({
    hubEndpoint: hub.url,
    demoAdapters: false,
    hubProgressIntervalMs: 20,
    ...(log ? { log } : {}),
  });

async function download(
  call: Awaited<ReturnType<typeof core>>["call"],
  events: Awaited<ReturnType<typeof core>>["events"],
  repo: string,
  file: string,
) {
  // Listening first: the download may finish before the call returns.
  const done = events.next("hub.download", (d) => d.repo === repo && d.file === file && d.state === "done");
  await call<Download>("hub.download", { repo, file });
  return done;
}

describe("hub service", () => {
  it("searches, lists a repo's files and the curated models", async () => {
    const { call } = await core();
    const found = await call<HubModel[]>("hub.search", { query: "demo" });
    expect(found.map((m) => m.repo)).toContain(DEMO_REPO);
    expect(found.find((m) => m.repo === DEMO_REPO)).toMatchObject({
      baseModel: "macaron-test/demo-chat",
      gated: false,
    });
    const repo = await call<HubRepo>("hub.repo", { repo: SPLIT_REPO });
    expect(repo.files).toHaveLength(1);
    expect(repo.files[0]).toMatchObject({ quant: "Q8_0", isAdapter: false });
    expect(repo.files[0]!.parts).toHaveLength(2);
    expect((await call<HubRepo>("hub.repo", { repo: NO_GGUF_REPO })).files).toEqual([]);
    const curated = await call<RecommendedModel[]>("hub.recommended", {});
    expect(new Set(curated.map((m) => m.tier))).toEqual(new Set(["small", "medium", "large", "tall"]));
    expect(curated.map((m) => m.repo)).toContain("Qwen/Qwen3-30B-A3B-GGUF");
  });

  it("stores the token without ever returning it", async () => {
    const { call, dataDir } = await core();
    expect(await call("hub.tokenStatus", {})).toEqual({ set: false, storage: "file" });
    const set = await call("hub.setToken", { token: hub.token });
    expect(set).toEqual({ set: true, storage: "file" });
    expect(JSON.stringify(set)).not.toContain(hub.token);
    expect((await stat(join(dataDir, "hub-token"))).mode & 0o777).toBe(0o600);
    expect(await call("hub.setToken", { token: null })).toEqual({ set: false, storage: "file" });
  });

  it("downloads a model with progress events, lists it in models.local and deletes it (never the loaded one)", async () => {
    const { call, events, dataDir } = await core();
    const done = await download(call, events, DEMO_REPO, "demo-chat-Q8_0.gguf");
    expect(events.of("hub.download").some((d) => d.state === "downloading")).toBe(true);
    const split = await download(call, events, SPLIT_REPO, "split-tiny-Q8_0-00001-of-00002.gguf");
    // Adapters and partial downloads are not models.
    await writeFile(join(dataDir, "models", "half.gguf.ipull"), "partial");
    const local = await call<LocalModel[]>("models.local", {});
    expect(local.map((m) => m.fileName).sort()).toEqual([
      "demo-chat-Q8_0.gguf",
      "split-tiny-Q8_0-00001-of-00002.gguf",
    ]);
    const demo = local.find((m) => m.fileName === "demo-chat-Q8_0.gguf")!;
    expect(demo).toMatchObject({
      architecture: "llama",
      repo: DEMO_REPO,
      quant: "Q8_0",
      sizeBytes: done.totalBytes,
    });
    expect(demo.parameters).toBeGreaterThan(500_000);
    expect(demo.contextLength).toBeGreaterThan(0);
    expect(local.find((m) => m.repo === SPLIT_REPO)!.sizeBytes).toBe(split.totalBytes);

    await call("models.open", { path: done.path });
    await expect(call("models.delete", { path: done.path })).rejects.toThrow(/is the loaded model/);
    await expect(call("models.delete", { path: join(dataDir, "macaron.db") })).rejects.toThrow(
      /Only models in the models folder/,
    );
    expect(await call("models.delete", { path: split.path })).toEqual({ deleted: true });
    await expect(stat(join(split.path, "..", "split-tiny-Q8_0-00002-of-00002.gguf"))).rejects.toThrow();
    expect((await call<LocalModel[]>("models.local", {})).map((m) => m.fileName)).toEqual([
      "demo-chat-Q8_0.gguf",
    ]);
  });

  it("finds adapters for the loaded base (metadata, then remote shapes) and installs one with the registry's checks", async () => {
    const { call, events } = await core();
    const done = await download(call, events, DEMO_REPO, "demo-chat-Q8_0.gguf");
    await call("models.open", { path: done.path });
    const matches = await call<HubAdapterMatch[]>("hub.adaptersForBase", {});
    // The wrong-shape ones are left out (PEFT_REPO is this test's neighbour, below).
    expect(matches.map((m) => m.repo)).toEqual([ADAPTER_REPO, PEFT_REPO]);
    expect(matches[0]!.files.map((f) => [f.path, f.kind]).sort()).toEqual([
      ["agent-lora.gguf", "gguf"],
      ["chat-lora.gguf", "gguf"],
      ["coding-lora.gguf", "gguf"],
      ["ui-lora.gguf", "gguf"],
    ]);
    expect(matches[0]!.reason).toMatch(/adapter of macaron-test\/demo-chat.*tensor shapes that match/);
    expect(matches.map((m) => m.repo)).not.toContain(WRONG_ADAPTER_REPO);

    const installed = await call<AdapterInfo>("hub.installAdapter", {
      repo: ADAPTER_REPO,
      file: "chat-lora.gguf",
    });
    expect(installed).toMatchObject({ id: "chat", domain: "chat" });
    // The wrong-base one is refused by the same validation as adapters.install.
    await expect(
      call("hub.installAdapter", { repo: WRONG_ADAPTER_REPO, file: "other-base-lora.gguf" }),
    ).rejects.toThrow(/does not fit the loaded model/);
  });
  it("finds PEFT adapter repos by their config and safetensors header alone, and installs one converted for the base", async () => {
    const logs: string[] = [];
    const { call, events, dataDir } = await core((message) => logs.push(message));
    const done = await download(call, events, DEMO_REPO, "demo-chat-Q8_0.gguf");
    await call("models.open", { path: done.path });
    const weights = `${PEFT_REPO}/adapter_model.safetensors`;
    const before = hub.bytesServed(weights);
    const requestsBefore = hub.requests.length;
    const matches = await call<HubAdapterMatch[]>("hub.adaptersForBase", {});
    const peft = matches.find((m) => m.repo === PEFT_REPO)!;
    // The root folder and the one a folder down; each is its weights' path with both files as parts.
    expect(peft.files.map((f) => [f.path, f.kind, f.parts.map((p) => p.path)])).toEqual([
      ["adapter_model.safetensors", "peft", ["adapter_config.json", "adapter_model.safetensors"]],
      [
        "v-only/adapter_model.safetensors",
        "peft",
        ["v-only/adapter_config.json", "v-only/adapter_model.safetensors"],
      ],
    ]);
    expect(peft.reason).toMatch(
      /^The hub lists it as an adapter of macaron-test\/demo-chat; it holds a PEFT LoRA adapter .* match the loaded llama model; it is converted to llama\.cpp's GGUF format for this model on install\.$/,
    );
    // Only the header was read of the weights: the 8-byte length by Range, then the JSON.
    const source = hub.repos
      .find((r) => r.id === PEFT_REPO)!
      .files.find((f) => f.path === "adapter_model.safetensors")!.source;
    const file = await readFile(source);
    const headerEnd = 8 + Number(file.readBigUInt64LE(0));
    expect(headerEnd).toBeLessThan(file.length);
    expect(hub.bytesServed(weights) - before).toBe(headerEnd);
    expect(
      hub.requests
        .slice(requestsBefore)
        .filter((r) => r.path === `/${PEFT_REPO}/resolve/main/adapter_model.safetensors`)
        .map((r) => r.range),
    ).toEqual(["bytes=0-7", `bytes=8-${headerEnd - 1}`]);
    // The misfit is left out, with the converter's reason in the log.
    expect(matches.map((m) => m.repo)).not.toContain(WRONG_PEFT_REPO);
    expect(logs.join("\n")).toMatch(
      /wide-peft-lora\/adapter_model\.safetensors does not fit the loaded model: "macaron-test\/wide-peft-lora" does not fit the base model: model\.layers\.0\.self_attn\.q_proj is 256×256 in the adapter but blk\.0\.attn_q\.weight is 128×128/,
    );

    const installed = await call<AdapterInfo>("hub.installAdapter", {
      repo: PEFT_REPO,
      file: "adapter_model.safetensors",
    });
    expect(installed).toMatchObject({
      id: "demo-chat-peft-lora",
      fitsLoadedModel: true,
      base: { architecture: "llama" },
      description:
        'Converted from the PEFT LoRA folder "demo-chat-peft-lora" (made for macaron-test/demo-chat).',
    });
    const sub = await call<AdapterInfo>("hub.installAdapter", {
      repo: PEFT_REPO,
      file: "v-only/adapter_config.json",
    });
    expect(sub.id).toBe("v-only");
    expect((await call<AdapterInfo[]>("adapters.list", {})).map((a) => a.id).sort()).toEqual([
      "demo-chat-peft-lora",
      "v-only",
    ]);
    const stored = (await readdir(join(dataDir, "adapters"))).filter((f) =>
      f.startsWith("demo-chat-peft-lora-"),
    );
    const gguf = await readGguf(join(dataDir, "adapters", stored[0]!));
    expect(gguf.metadata["general.type"]).toBe("adapter");
    expect(gguf.tensors.map((t) => t.name)).toEqual([
      "blk.0.attn_q.weight.lora_a",
      "blk.0.attn_q.weight.lora_b",
      "blk.0.attn_v.weight.lora_a",
      "blk.0.attn_v.weight.lora_b",
      "blk.1.attn_q.weight.lora_a",
      "blk.1.attn_q.weight.lora_b",
    ]);
    // The downloaded copies are gone; nothing landed among the models.
    expect(await leftovers(dataDir)).toEqual([]);
    expect(existsSync(join(dataDir, "models", ...PEFT_REPO.split("/")))).toBe(false);
  });

  it("refuses a hostile or misfitting PEFT repo with a clear error, leaves nothing behind and keeps answering", async () => {
    const { core: c, call, events, dataDir } = await core();
    const done = await download(call, events, DEMO_REPO, "demo-chat-Q8_0.gguf");
    await call("models.open", { path: done.path });
    const install = (repo: string, file = "adapter_model.safetensors") =>
      refusal(c, "hub.installAdapter", { repo, file });
    const listed = async () =>
      (await call<HubAdapterMatch[]>("hub.adaptersForBase", {}))
        .find((m) => m.repo === PEFT_REPO)
        ?.files.map((f) => f.path) ?? [];
    const config = `${PEFT_REPO}/resolve/main/adapter_config.json`;
    const weights = `${PEFT_REPO}/resolve/main/adapter_model.safetensors`;
    const length = (n: bigint) => {
      const b = Buffer.alloc(8);
      b.writeBigUInt64LE(n);
      return b;
    };
    // The test hub writes an answer as UTF-8: these bodies keep to ASCII (lengths under 128 too).
    const answer = (body: Buffer | string): Fault => ({ kind: "answer", body: body.toString("latin1") });

    // Shapes for another base: refused from the header, before any weights are downloaded.
    const wide = `${WRONG_PEFT_REPO}/adapter_model.safetensors`;
    const served = hub.bytesServed(wide);
    const misfit = await install(WRONG_PEFT_REPO);
    expect(misfit.code).toBe("invalid_input");
    expect(misfit.message).toMatch(
      /^"macaron-test\/wide-peft-lora" does not fit the base model: model\.layers\.0\.self_attn\.q_proj is 256×256 in the adapter but blk\.0\.attn_q\.weight is 128×128 in the base .* The loaded model is ".*" \(demo-chat-Q8_0\.gguf\)\.$/,
    );
    expect(hub.bytesServed(wide) - served).toBeLessThan(4096);

    const cases: {
      what: string;
      path: string;
      fault: Fault;
      listed: string[];
      code: string;
      message: RegExp;
    }[] = [
      {
        what: "a config that is not JSON",
        path: config,
        fault: answer("<html>Down for maintenance</html>"),
        listed: ["v-only/adapter_model.safetensors"],
        code: "invalid_input",
        message: /^"macaron-test\/demo-chat-peft-lora"'s adapter_config\.json is not a JSON object\.$/,
      },
      {
        what: "a header that claims a terabyte",
        path: weights,
        fault: answer(Buffer.concat([length(2n ** 40n), Buffer.from("{}")])),
        listed: ["v-only/adapter_model.safetensors"],
        code: "invalid_input",
        message:
          /^"adapter_model\.safetensors" is not a usable safetensors file: its header claims 1099511627776 bytes \(the file has \d+\)\.$/,
      },
      {
        what: "a header that is not JSON",
        path: weights,
        fault: answer(Buffer.concat([length(12n), Buffer.from("{not json at")])),
        listed: ["v-only/adapter_model.safetensors"],
        code: "invalid_input",
        message: /its header is not JSON\.$/,
      },
      {
        what: "a header nested 60 levels deep",
        path: weights,
        fault: answer(Buffer.concat([length(120n), Buffer.from(`${"[".repeat(60)}${"]".repeat(60)}`)])),
        listed: ["v-only/adapter_model.safetensors"],
        code: "invalid_input",
        message: /its header is nested deeper than the format's\.$/,
      },
      {
        what: "weights the hub lists but cannot serve",
        path: `${PEFT_REPO}/adapter_model.safetensors`,
        fault: { kind: "status", status: 404 },
        listed: ["v-only/adapter_model.safetensors"],
        code: "not_found",
        message: /adapter_model\.safetensors in macaron-test\/demo-chat-peft-lora was not found/,
      },
      {
        what: "weights listed without a sha256",
        path: `${PEFT_REPO}/adapter_model.safetensors`,
        fault: { kind: "no-sha256" },
        listed: ["adapter_model.safetensors", "v-only/adapter_model.safetensors"],
        code: "invalid_input",
        message:
          /^The hub lists no sha256 for adapter_model\.safetensors in macaron-test\/demo-chat-peft-lora, so its download cannot be checked/,
      },
      {
        what: "weights whose bytes differ from their sha256",
        path: `${PEFT_REPO}/adapter_model.safetensors`,
        fault: { kind: "corrupt", offset: 4096 },
        listed: ["adapter_model.safetensors", "v-only/adapter_model.safetensors"],
        code: "upstream",
        message:
          /^adapter_model\.safetensors from macaron-test\/demo-chat-peft-lora is damaged or was replaced/,
      },
    ];
    for (const c of cases) {
      hub.setFault(c.path, c.fault);
      try {
        expect(await listed(), c.what).toEqual(c.listed);
        const err = await install(PEFT_REPO);
        expect([err.code, err.message], c.what).toEqual([c.code, expect.stringMatching(c.message)]);
      } finally {
        hub.setFault(c.path, null);
      }
      expect(await leftovers(dataDir), c.what).toEqual([]);
    }
    // A file that is not in the repo's listing.
    expect((await install(PEFT_REPO, "nope/adapter_model.safetensors")).code).toBe("not_found");

    expect(await call<AdapterInfo[]>("adapters.list", {})).toEqual([]);
    expect(await leftovers(dataDir)).toEqual([]);
    // Still answering, and the same repo installs once the hub behaves.
    expect(
      (await call<AdapterInfo>("hub.installAdapter", { repo: PEFT_REPO, file: "adapter_model.safetensors" }))
        .id,
    ).toBe("demo-chat-peft-lora");
  });
});

/** The error result of a call through core's dispatch: a code and a sentence, never "internal". */
async function refusal(
  core: Awaited<ReturnType<typeof startFakeCore>>["core"],
  method: string,
  input: unknown,
): Promise<{ code: string; message: string }> {
  const result = await core.dispatch(method, input, { transport: "ipc" });
  if (result.ok) throw new Error(`expected ${method} to be refused`);
  expect(result.error.code).not.toBe("internal");
  return result.error;
}

/** Temporary PEFT download folders left in the data folder. */
async function leftovers(dataDir: string): Promise<string[]> {
  return (await readdir(dataDir)).filter((f) => f.startsWith(".hub-peft-"));
}
