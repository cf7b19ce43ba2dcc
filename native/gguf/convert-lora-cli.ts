import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { isGgufError } from "./gguf-error";
import { convertPeftToFile, isPeftError } from "./peft-lora";

/** `npm run convert-lora -- --peft DIR --base FILE.gguf --out FILE.gguf [--name NAME]` */

const USAGE = "Usage: npm run convert-lora -- --peft DIR --base FILE.gguf --out FILE.gguf [--name NAME]";

function fail(message: string, code = 2): never {
  process.stderr.write(`${message}\n${code === 2 ? `${USAGE}\n` : ""}`);
  process.exit(code);
}

async function main(): Promise<void> {
  let values: { peft?: string; base?: string; out?: string; name?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        peft: { type: "string" },
        base: { type: "string" },
        out: { type: "string" },
        name: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
  } catch (err) {
    fail((err as Error).message);
  }
  if (values.help) {
    process.stdout.write(
      `${USAGE}\nConverts a Hugging Face PEFT LoRA folder (adapter_config.json + adapter_model.safetensors)\n` +
        "into a llama.cpp LoRA GGUF for the given base model, checking that it fits.\n",
    );
    return;
  }
  if (!values.peft)
    fail("Missing --peft DIR: the folder with adapter_config.json and adapter_model.safetensors.");
  if (!values.base) fail("Missing --base FILE.gguf: the base model the adapter is for.");
  if (!values.out) fail("Missing --out FILE.gguf: where to write the adapter.");
  const started = performance.now();
  try {
    const result = await convertPeftToFile({
      peftDir: resolve(values.peft),
      base: resolve(values.base),
      out: resolve(values.out),
      ...(values.name ? { name: values.name } : {}),
    });
    const lines = [
      ...result.warnings.map((w) => `warning: ${w}`),
      `wrote ${resolve(values.out)}: ${result.architecture} LoRA, ${result.pairs} pairs ` +
        `(${result.targets.join(", ")}), rank ${result.ranks.join("/")}, alpha ${result.alpha}` +
        `${result.config.useRslora ? " (rsLoRA)" : ""}`,
      `done in ${(performance.now() - started).toFixed(0)} ms`,
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
  } catch (err) {
    if (isPeftError(err) || isGgufError(err)) fail(err.message, 1);
    throw err;
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`convert-lora failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
