/**
 * A cloud service on loopback with one shipped demo specialist published as its live version:
 * the set-up of the self-improvement loop tests. Call at a file's top level; `cloud()` is
 * readable inside the tests and hooks registered after it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { type ManifestOnDisk, publishAdapter, publishManifestOf } from "../../cloud/registry-client";
import { startCloud, type RunningCloud } from "../../cloud/server";
import { demoAdaptersDir } from "../../native/gguf/demo-files";

export function demoCloud(options: {
  dataDir: () => string;
  adminKey: string;
  domain: string;
}): () => RunningCloud {
  let cloud: RunningCloud | undefined;
  beforeAll(async () => {
    cloud = await startCloud({ dataDir: options.dataDir(), adminKey: options.adminKey });
    const manifest = JSON.parse(
      readFileSync(join(demoAdaptersDir(), `${options.domain}.json`), "utf8"),
    ) as ManifestOnDisk;
    await publishAdapter(
      { url: cloud.url, adminKey: options.adminKey },
      publishManifestOf(manifest),
      readFileSync(join(demoAdaptersDir(), `${options.domain}.gguf`)),
    );
  }, 120_000);
  afterAll(async () => {
    await cloud?.close();
  });
  return () => {
    if (!cloud) throw new Error("the demo cloud is not started yet");
    return cloud;
  };
}
