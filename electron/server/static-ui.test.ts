import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UI_NOT_BUILT } from "./static-ui";
import { FakeCore, listenForTest } from "../../testing/server/test-core";
import { suiteDir } from "../../testing/core/temp-dir";

describe("serving the built UI", () => {
  const dir = suiteDir("macaron-ui-");
  let server: Awaited<ReturnType<typeof listenForTest>>;

  beforeAll(async () => {
    mkdirSync(join(dir.path, "assets"));
    writeFileSync(join(dir.path, "index.html"), "<!doctype html><title>Macaron</title>");
    writeFileSync(join(dir.path, "assets", "app.js"), "console.log(1)");
    server = await listenForTest(new FakeCore(), { rendererDir: dir.path });
  });
  afterAll(async () => {
    await server.close();
  });

  it("serves index.html at / without a key, with security headers", async () => {
    const res = await fetch(`${server.url}/`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("<title>Macaron</title>");
    const host = new URL(server.url).host;
    expect(res.headers.get("content-security-policy")).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
        `connect-src 'self' ws://${host} wss://${host}; object-src 'none'; base-uri 'none'; ` +
        "frame-ancestors 'none'; form-action 'self'",
    );
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
  });

  it("serves assets and falls back to index.html for client routes", async () => {
    const asset = await fetch(`${server.url}/assets/app.js`);
    expect(await asset.text()).toBe("console.log(1)");
    expect(asset.headers.get("content-type")).toContain("javascript");
    const route = await fetch(`${server.url}/conversations/abc`);
    expect(route.status).toBe(200);
    expect(await route.text()).toContain("<title>Macaron</title>");
  });
});

describe("without a UI build", () => {
  it("answers pages with 503 and says how to build", async () => {
    const server = await listenForTest(new FakeCore(), { rendererDir: join(tmpdir(), "macaron-missing-ui") });
    try {
      const res = await fetch(`${server.url}/`);
      expect(res.status).toBe(503);
      expect(await res.text()).toBe(UI_NOT_BUILT);
      const health = await fetch(`${server.url}/api/health`);
      expect(health.status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
