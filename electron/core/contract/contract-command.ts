/**
 * `npm run contract -- --model FILE --adapters DIR [--contract FILE] [--json OUT]`: the same
 * contract the app runs as its gate, from the command line. Starts a real engine on the model,
 * installs the adapters of DIR (validated like the app does) into a temporary data folder,
 * runs the contract, prints a table, writes the JSON report. Exit 0 = passed, 1 = failed,
 * 2 = could not run (bad arguments, model or contract).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_SYSTEM_PROMPT } from "../chat/turn-pipeline";
import { EngineSupervisor } from "../engine/supervisor";
import { spawnNodeEngine } from "../engine/spawn-node";
import { assembleCore } from "../index";
import { loadContract } from "./contract-schema";
import { type ContractReport, runContract } from "./contract-runner";
import { coreTarget } from "./core-target";
import { defaultContract } from "./default-contract";
import { formatReport } from "./report-table";

export const USAGE = `Usage: npm run contract -- --model FILE.gguf --adapters DIR [--contract FILE.json] [--json OUT.json]

  --model     base model (GGUF) to run the contract on
  --adapters  folder of LoRA adapters (*.gguf + manifests) to evaluate
  --contract  contract file                        default resources/contracts/default.json
  --json      write the JSON report here`;

export interface CommandIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** Run the command; resolves with the exit code (never throws). */
export async function runContractCommand(
  argv: string[],
  io: CommandIo,
): Promise<{ code: number; report: ContractReport | null }> {
  let args: { model: string; adapters: string; contract?: string; json?: string };
  try {
    const { values } = parseArgs({
      args: argv,
      options: {
        model: { type: "string" },
        adapters: { type: "string" },
        contract: { type: "string" },
        json: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    });
    if (values.help) {
      io.out(USAGE);
      return { code: 0, report: null };
    }
    if (!values.model || !values.adapters) throw new Error("--model and --adapters are required");
    args = {
      model: resolve(values.model),
      adapters: resolve(values.adapters),
      contract: values.contract,
      json: values.json,
    };
  } catch (err) {
    io.err(`${(err as Error).message}\n\n${USAGE}`);
    return { code: 2, report: null };
  }

  let contract;
  try {
    contract = args.contract ? await loadContract(resolve(args.contract)) : defaultContract();
  } catch (err) {
    io.err((err as Error).message);
    return { code: 2, report: null };
  }

  const dataDir = await mkdtemp(join(tmpdir(), "macaron-contract-"));
  const refused: string[] = [];
  const core = await assembleCore(
    {
      dataDir,
      initialModel: args.model,
      adaptersDir: args.adapters,
      demoAdapters: false,
      log: (message, err) => {
        if (/could not (install|open|read)/.test(message))
          refused.push(message + (err instanceof Error ? `: ${err.message}` : ""));
      },
    },
    () => new EngineSupervisor(spawnNodeEngine(), { readyTimeoutMs: 60_000 }),
  );
  try {
    const status = core.engineStatus();
    if (status.state !== "ready") {
      io.err(`Cannot load the model ${args.model}: ${status.error ?? status.state}`);
      return { code: 2, report: null };
    }
    for (const line of refused) io.err(`refused: ${line}`);
    const report = await runContract(contract, {
      target: coreTarget(core),
      systemPrompt: DEFAULT_SYSTEM_PROMPT,
    });
    io.out(formatReport(report));
    if (args.json) await writeFile(resolve(args.json), `${JSON.stringify(report, null, 2)}\n`);
    // An adapter the app would refuse fails the run too: it could never go live.
    return { code: report.passed && refused.length === 0 ? 0 : 1, report };
  } finally {
    await core.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
