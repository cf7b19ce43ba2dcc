/**
 * `npm run bench -- <name> [options]`. Each benchmark writes bench/results/<name>.json and prints
 * a table; ratios compare against a baseline measured in the same run.
 */
import { parseArgs } from "node:util";
import { benchAdapters } from "./adapters";
import { benchAgentTools } from "./agent-tools";
import { benchCycle } from "./cycle";
import { benchDemo } from "./demo";
import { benchDemoSuggestions } from "./demo-suggestions";
import { benchDownload } from "./download";
import { benchEmbeddings } from "./embeddings";
import { benchFit } from "./fit";
import { benchGenui } from "./genui";
import { benchMarkdown } from "./markdown";
import { benchMcp } from "./mcp";
import { benchMemory } from "./memory";
import { benchNativeBuild } from "./native-build";
import { benchRedaction } from "./redaction";
import { benchReleases } from "./releases";
import { benchStructuredOutput } from "./structured-output";
import { benchSync } from "./sync";
import { benchToolCalls } from "./tool-calls";

// Not strict: the benchmarks registered as modules below read their own options.
const { positionals: given, values } = parseArgs({
  allowPositionals: true,
  strict: false,
  options: {
    size: { type: "string", default: "tiny" },
    runs: { type: "string", default: "3" },
    tokens: { type: "string", default: "256" },
    examples: { type: "string", default: "1000" },
    threads: { type: "string", default: "1" },
    keep: { type: "boolean", default: false },
  },
}) as {
  positionals: string[];
  values: { size: string; runs: string; tokens: string; examples: string; threads: string; keep: boolean };
};
// Option values are positionals too when not strict (`--sizes 10000`): only the first names a bench.
const positionals = given.slice(0, 1);

/**
 * Benchmarks that parse their own options: `bench/<name>.ts` exports `main(argv)`, given the
 * arguments after the name. Imported only when run.
 */
const MODULES = [
  "serve",
  "direct-ab",
  "search",
  "ipc",
  "hops",
  "ttft",
  "parallel",
  "embeddings-server",
  "cloud",
  "markdown-page",
  "hub-hostile",
  "compounding",
  "v1-system",
  "self-improve",
  "flakiness",
  "crash-soak",
  "agent-unseen-tools",
  "episodes",
];
const load = (name: string) => import(`./${name}.ts`) as Promise<{ main(argv: string[]): Promise<void> }>;

const benches: Record<string, () => Promise<void>> = {
  // Defaults to "small" (a quick run); "--size bench" gives the numbers that matter.
  adapters: () =>
    benchAdapters({
      size: process.argv.includes("--size") ? values.size : "small",
      runs: Number(values.runs),
    }),
  redaction: () => benchRedaction(),
  sync: () => benchSync({ runs: Number(values.runs) }),
  genui: () => benchGenui({ runs: Number(values.runs) }),
  markdown: () => benchMarkdown(),
  releases: () => benchReleases({ runs: Number(values.runs) }),
  memory: () => benchMemory({ runs: Number(values.runs) }),
  mcp: () => benchMcp({ runs: Number(values.runs) }),
  "tool-calls": () => benchToolCalls({ runs: Number(values.runs) }),
  "structured-output": () => benchStructuredOutput({ runs: Number(values.runs) }),
  embeddings: () => benchEmbeddings({ runs: Number(values.runs) }),
  "agent-tools": () => benchAgentTools({ runs: Number(values.runs) }),
  demo: () => benchDemo(),
  "demo-suggestions": () => benchDemoSuggestions(),
  cycle: () => benchCycle({ examples: Number(values.examples) }),
  fit: () => benchFit(),
  download: () => benchDownload({ runs: Number(values.runs) }),
  // Builds llama.cpp (~5.5 min on 2 cores) in a copy of node-llama-cpp: run it on purpose only.
  "native-build": () =>
    benchNativeBuild({ runs: Number(values.runs), threads: Number(values.threads), keep: values.keep }),
};

for (const name of MODULES)
  benches[name] = async () => (await load(name)).main(process.argv.slice(process.argv.indexOf(name) + 1));

// Long runs, on purpose only: native-build and ttft build llama.cpp (minutes each); compounding
// trains and judges five cycles; self-improve samples, trains and judges a cycle per domain;
// episodes runs the agent episodes before and after one such cycle.
const onPurpose = new Set(["native-build", "ttft", "compounding", "self-improve", "episodes"]);
// flakiness runs the whole slow test tier once per round (15–20 minutes here).
onPurpose.add("flakiness");
// parallel builds llama-server as ttft does, then runs it beside the app.
onPurpose.add("parallel");
// embeddings-server too, beside two app servers.
onPurpose.add("embeddings-server");
// crash-soak kills the server 200 times by default (~18 minutes here).
onPurpose.add("crash-soak");
const names = positionals.length > 0 ? positionals : Object.keys(benches).filter((n) => !onPurpose.has(n));
for (const name of names) {
  const bench = benches[name];
  if (!bench) {
    console.error(`unknown benchmark "${name}"; available: ${Object.keys(benches).join(", ")}`);
    process.exit(2);
  }
  await bench();
}
