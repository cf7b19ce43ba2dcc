import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../api";
import { writeFixtures, type FixturePaths } from "../../../native/gguf/fixtures";
import { readGguf } from "../../../native/gguf/reader";
import { openDatabase } from "../db/database";
import { EventBus } from "../events/event-bus";
import { suiteDir } from "../../../testing/core/temp-dir";
import { loraPair, peftConfig, writePeftFolder, type TestTensor } from "../../../testing/peft/peft-folder";
import { AdapterRegistry } from "./adapter-registry";
import { AdapterStore } from "./adapter-store";

/** adapters.install of a Hugging Face PEFT LoRA folder: converted for the loaded base, then installed as a GGUF. */

const root = suiteDir("macaron-registry-peft-");
let fx: FixturePaths;
let attention: TestTensor[];
beforeAll(async () => {
  fx = await writeFixtures(join(root.path, "fx"));
  const base = await readGguf(fx.basePath);
  const dims = (name: string) => base.tensors.find((t) => t.name === name)!.dims;
  const [qIn, qOut] = dims("blk.0.attn_q.weight");
  const [vIn, vOut] = dims("blk.1.attn_v.weight");
  attention = [
    ...loraPair("model.layers.0.self_attn.q_proj", qIn!, qOut!, 4, 1),
    ...loraPair("model.layers.1.self_attn.v_proj", vIn!, vOut!, 4, 3),
  ];
});

let n = 0;
function setup(base: string | null) {
  const dataDir = join(root.path, `data-${n++}`);
  const registry = new AdapterRegistry({
    store: new AdapterStore(openDatabase(":memory:")),
    dataDir,
    events: new EventBus(),
    basePath: () => base,
    log: () => undefined,
  });
  const files = () => (existsSync(registry.dir) ? readdirSync(registry.dir) : []);
  return { registry, files };
}

async function refusal(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => new Error("expected a refusal"),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).code).toBe("invalid_input");
  return err as ApiError;
}

describe("adapters.install of a PEFT folder", () => {
  it("converts it for the loaded base and installs the GGUF under the folder's name", async () => {
    const s = setup(fx.basePath);
    const folder = await writePeftFolder(join(root.path, "my-peft-lora.v2"), peftConfig(4), attention);
    const info = await s.registry.install(folder);
    expect(info.id).toBe("my-peft-lora.v2");
    expect(info.fitsLoadedModel).toBe(true);
    expect(info.base.architecture).toBe("llama");
    expect(info.description).toBe(
      'Converted from the PEFT LoRA folder "my-peft-lora.v2" (made for Qwen/Qwen3-0.6B).',
    );
    expect(s.files()).toEqual([`my-peft-lora.v2-${info.sha256.slice(0, 12)}.gguf`]);
    const installed = await readGguf(join(s.registry.dir, s.files()[0]!));
    expect(installed.metadata["general.type"]).toBe("adapter");
    expect(installed.tensors.map((t) => t.name)).toEqual([
      "blk.0.attn_q.weight.lora_a",
      "blk.0.attn_q.weight.lora_b",
      "blk.1.attn_v.weight.lora_a",
      "blk.1.attn_v.weight.lora_b",
    ]);
    expect((await refusal(s.registry.install(folder))).message).toMatch(
      /An adapter "my-peft-lora.v2" is already installed/,
    );
  });

  it("needs a loaded base to convert for", async () => {
    const s = setup(null);
    const folder = await writePeftFolder(join(root.path, "no-base"), peftConfig(4), attention);
    expect((await refusal(s.registry.install(folder))).message).toBe(
      '"no-base" is a PEFT adapter folder: load the base model it was made for first, then install it (it is converted for the loaded model).',
    );
  });

  it("refuses DoRA and adapters for another base with the converter's reason; nothing is installed", async () => {
    const s = setup(fx.basePath);
    const dora = await writePeftFolder(join(root.path, "dora"), peftConfig(4, { use_dora: true }), attention);
    expect((await refusal(s.registry.install(dora))).message).toMatch(
      /^"dora" cannot be converted: it is a DoRA adapter \(use_dora\).* The loaded model is ".*"/,
    );
    const wide = await writePeftFolder(
      join(root.path, "wide"),
      peftConfig(4),
      loraPair("model.layers.0.self_attn.q_proj", 4096, 4096, 4, 1),
    );
    expect((await refusal(s.registry.install(wide))).message).toMatch(
      /^"wide" does not fit the base model: model\.layers\.0\.self_attn\.q_proj is 4096×4096 in the adapter/,
    );
    expect(s.files()).toEqual([]);
    expect(await s.registry.list()).toEqual([]);
  });
});
