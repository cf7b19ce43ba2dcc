/**
 * The test hub as its own process (e2e, bench): `node --import tsx testing/hub/hf-hub-cli.ts
 * [--dir DIR] [--port 0] [--blob-mb N]`. Serves defaultHubRepos(DIR), or with --blob-mb one repo
 * `macaron-bench/throughput-GGUF` holding `throughput-F16.gguf` of N MiB filler bytes. Prints
 * `hub listening on URL` once it accepts connections (use it as HF_ENDPOINT); SIGTERM stops it.
 */
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startHubServer, writeBlob } from "./hf-hub-server";

const { values } = parseArgs({
  options: {
    dir: { type: "string" },
    port: { type: "string", default: "0" },
    "blob-mb": { type: "string" },
  },
});
const dir = values.dir ?? join(tmpdir(), `macaron-hub-${process.pid}`);
mkdirSync(dir, { recursive: true });
let repos;
if (values["blob-mb"]) {
  const source = join(dir, "throughput.gguf");
  await writeBlob(source, Number(values["blob-mb"]) * 1024 * 1024, 11);
  repos = [{ id: "macaron-bench/throughput-GGUF", files: [{ path: "throughput-F16.gguf", source }] }];
}
const hub = await startHubServer({ dir, repos, port: Number(values.port) });
console.log(`hub listening on ${hub.url}`);
const stop = () => void hub.close().then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
