// `npm run lint`'s second half: the arrows of ARCHITECTURE.md, checked by dependency-cruiser
// with the rules in .dependency-cruiser.cjs. Runs through dependency-cruiser's API rather than
// its `depcruise` command, whose start-up check refuses Node 20 (this project supports >=20.19).
// Arguments: folders to check (default: every top-level folder of ours that exists).
import { existsSync } from "node:fs";
import { cruise, format } from "dependency-cruiser";
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";

const CONFIG = "./.dependency-cruiser.cjs";
const FOLDERS = [
  "electron",
  "renderer",
  "native",
  "cloud",
  "common",
  "testing",
  "bench",
  "e2e",
  "scripts",
  "adapters",
];

const args = process.argv.slice(2);
const folders = (args.length > 0 ? args : FOLDERS).filter((folder) => existsSync(folder));

const options = await extractDepcruiseOptions(CONFIG);
const tsConfigFile = options.ruleSet?.options?.tsConfig?.fileName;
const tsConfig = tsConfigFile ? extractTSConfig(tsConfigFile) : undefined;
const result = await cruise(folders, { ...options, validate: true }, {}, { tsConfig });
const report = await format(result.output, { outputType: "err" });
process.stdout.write(report.output);
process.exitCode = report.exitCode;
