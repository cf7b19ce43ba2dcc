/**
 * `npm run train -- --base FILE.gguf --data FILE.jsonl --out DIR --id ID [options]`: trains a
 * LoRA adapter and writes DIR/ID.gguf + DIR/ID.json (see train.ts and cli-args.ts for the
 * options). Progress on stdout; an error is one line on stderr and exit code 1.
 */
import { parseTrainArgs, USAGE } from "./cli-args";
import { progressPrinter } from "./progress-printer";
import { trainAdapter } from "./train";

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseTrainArgs>;
  try {
    parsed = parseTrainArgs(argv);
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    return 1;
  }
  if (parsed.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const printer = progressPrinter({
    write: (text) => process.stdout.write(text),
    tty: process.stdout.isTTY === true,
    verbose: parsed.verbose,
  });
  const abort = new AbortController();
  process.once("SIGINT", () => abort.abort());
  process.once("SIGTERM", () => abort.abort());
  try {
    const result = await trainAdapter({ ...parsed.options, signal: abort.signal }, printer.onProgress);
    printer.summary(result);
    return 0;
  } catch (err) {
    printer.finish();
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`error: ${message}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
