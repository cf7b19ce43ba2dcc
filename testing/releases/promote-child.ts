/**
 * Test-only child for promotion-kill.test.ts: a whole app (core + the real engine) that the test
 * kills with SIGKILL while it promotes a new version. Not imported by production code.
 *
 * Run: node --import tsx promote-child.ts <dataDir> <basePath> <adaptersDir> <versionFile>
 * It starts core on <dataDir> with the base model and the fixture adapters, installs
 * <versionFile> (manifest beside it) as a new version, which is staged and put through the
 * gate in the background, and waits for the gate's verdict. Every step is one line on stdout,
 * so the test knows where the promotion stands when it kills:
 *   READY                 core started, adapters installed
 *   STAGED <version>      the version's row is committed; the gate is running from now on
 *   GATE <state> <done>/<total>
 *   DONE <status>         the gate decided (the process then closes core and exits 0)
 */
import type { AdapterVersionInfo, EventPayload, Result } from "../../electron/api";
import { spawnTestEngine } from "../engine/real-engine";
import { createCore } from "../../electron/core/index";

const [dataDir, basePath, adaptersDir, versionFile] = process.argv.slice(2);
if (!dataDir || !basePath || !adaptersDir || !versionFile) {
  console.error("usage: promote-child.ts <dataDir> <basePath> <adaptersDir> <versionFile>");
  process.exit(2);
}

const say = (line: string): void => void process.stdout.write(`${line}\n`);
const ctx = { transport: "ipc" } as const;

const core = await createCore({
  dataDir,
  initialModel: basePath,
  adaptersDir,
  spawnEngine: spawnTestEngine(),
});
const decided = new Promise<string>((resolve) => {
  core.subscribe((event, payload) => {
    if (event !== "adapters.gate") return;
    const g = payload as EventPayload<"adapters.gate">;
    say(`GATE ${g.state} ${g.done}/${g.total}`);
    if (g.state === "passed" || g.state === "failed" || g.state === "error") resolve(g.state);
  });
});
say("READY");
const staged: Result<unknown> = await core.dispatch("adapters.installVersion", { path: versionFile }, ctx);
if (!staged.ok) {
  console.error(`installVersion: ${staged.error.code}: ${staged.error.message}`);
  process.exit(1);
}
say(`STAGED ${(staged.value as AdapterVersionInfo).version}`);
say(`DONE ${await decided}`);
await core.close();
process.exit(0);
