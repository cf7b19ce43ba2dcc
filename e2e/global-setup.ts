import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { writeFixtures } from "../native/gguf/fixtures";

/** Builds the UI once and writes the generated tiny models every test file shares. */
export default async function globalSetup(): Promise<void> {
  const root = resolve(import.meta.dirname, "..");
  execFileSync(process.execPath, [resolve(root, "scripts/ensure-build.mjs")], {
    cwd: root,
    stdio: "inherit",
  });
  const dir = resolve(root, "test-results/fixtures");
  mkdirSync(dir, { recursive: true });
  await writeFixtures(dir);
  process.env.MACARON_FIXTURES = dir;
}
