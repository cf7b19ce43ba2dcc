import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../api";
import { ensureFixtureModel } from "../../../native/gguf/fixtures";
import { suiteDir } from "../../../testing/core/temp-dir";
import { ggufInspector } from "./gguf-inspector";

const dir = suiteDir();
let demoPath = "";
beforeAll(async () => {
  demoPath = await ensureFixtureModel(join(dir.path, "models"));
});

async function invalid(path: string): Promise<string> {
  const err = await ggufInspector.inspect(path).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).code).toBe("model_invalid");
  return (err as ApiError).message;
}

describe("ggufInspector", () => {
  it("summarizes a real GGUF model", async () => {
    const info = await ggufInspector.inspect(demoPath);
    expect(info).toMatchObject({ path: demoPath, architecture: "llama" });
    expect(info.sizeBytes).toBeGreaterThan(0);
    expect(info.blockCount).toBeGreaterThan(0);
  });

  it("maps reader errors to model_invalid with the reader's sentence", async () => {
    const text = join(dir.path, "notes.gguf");
    writeFileSync(text, "hello, this is text and not a model at all");
    expect(await invalid(text)).toMatch(/GGUF/);
    expect(await invalid(join(dir.path, "missing.gguf"))).toMatch(/missing\.gguf/);
  });
});
