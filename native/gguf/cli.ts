import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { writeFixtures } from "./fixtures";
import { isTinyModelSize } from "./tiny-model";
import { isQwenArchitecture } from "./tiny-qwen";

/** `npm run fixtures -- --out DIR [--size tiny|small|bench] [--arch llama|qwen3|qwen3moe]` */

const USAGE = "Usage: npm run fixtures -- --out DIR [--size tiny|small|bench] [--arch llama|qwen3|qwen3moe]";

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

async function main(): Promise<void> {
  let values: { out?: string; size?: string; arch?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        out: { type: "string" },
        size: { type: "string" },
        arch: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
  } catch (err) {
    fail((err as Error).message);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\nWrites a deterministic tiny demo model and four demo LoRA adapters.\n`);
    return;
  }
  if (!values.out) fail("Missing --out DIR: where to write the model and adapters.");
  const size = values.size ?? "tiny";
  if (!isTinyModelSize(size)) fail(`Unknown --size "${size}": use tiny, small or bench.`);
  const architecture = values.arch ?? "llama";
  if (architecture !== "llama" && !isQwenArchitecture(architecture))
    fail(`Unknown --arch "${architecture}": use llama, qwen3 or qwen3moe.`);
  if (architecture !== "llama" && size !== "tiny")
    fail(`The ${architecture} fixture comes in one size: tiny.`);

  const outDir = resolve(values.out);
  const started = Date.now();
  const result = await writeFixtures(outDir, { size, architecture });
  const lines = [
    `wrote base model ${result.basePath} (sha256 ${result.baseSha256})`,
    ...result.adapters.flatMap((a) => [
      `wrote adapter ${a.id}: ${a.path}`,
      `wrote manifest ${a.id}: ${a.manifestPath}`,
    ]),
    `done in ${Date.now() - started} ms`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`fixtures failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
