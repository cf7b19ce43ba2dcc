/**
 * A separate OS process on a registry folder, for cloud/registry-processes.test.ts (replicas
 * sharing one artifact folder, without the HTTP service around them):
 *
 *   node --import tsx cloud/testing/registry-publisher.ts publish <dataDir> <v1,v2,…>
 *     prints "ready", waits for a line on stdin (so every process starts publishing at the
 *     same moment), publishes the versions at once, prints one JSON result line per version.
 *   node --import tsx cloud/testing/registry-publisher.ts hold <dataDir>
 *     takes the index lock, prints "held" and keeps it until killed.
 */
import { once } from "node:events";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { PublishManifest } from "../../common/registry-protocol";
import { codingManifest } from "../../testing/cloud/hand-built-versions";
import { acquireDirLock, INDEX_LOCK, RegistryStore } from "../registry";

/** The bytes every process publishes for `version`: one content per version. */
export const versionBody = (version: string): Buffer =>
  Buffer.from(`adapter bytes of ${version}\n`.repeat(64));

export interface PublishResult {
  version: string;
  ok: boolean;
  status: number | null;
}

async function main(): Promise<void> {
  const [mode, dataDir, versions] = process.argv.slice(2);
  if (!dataDir) throw new Error("usage: registry-publisher.ts publish|hold <dataDir> [versions]");
  const store = new RegistryStore(dataDir);
  if (mode === "hold") {
    await acquireDirLock(join(store.dir, INDEX_LOCK));
    console.log("held");
    setInterval(() => {}, 60_000); // holds until killed
    return;
  }
  if (mode !== "publish" || !versions) throw new Error(`unknown mode ${mode}`);
  console.log("ready");
  await once(process.stdin, "data");
  process.stdin.pause();
  const results = await Promise.all(
    versions.split(",").map(async (version): Promise<PublishResult> => {
      try {
        const manifest = PublishManifest.parse(codingManifest(version, "0".repeat(64), undefined, version));
        await store.publish(manifest, versionBody(version), 1);
        return { version, ok: true, status: null };
      } catch (err) {
        const status = (err as { statusCode?: unknown }).statusCode;
        if (typeof status !== "number") throw err;
        return { version, ok: false, status };
      }
    }),
  );
  for (const r of results) console.log(JSON.stringify(r));
}

// Run as a script only: the test imports versionBody from here.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
