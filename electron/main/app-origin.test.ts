import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { createAppOrigin } from "./app-origin";

describe("createAppOrigin (production, file://)", () => {
  const rendererDir = "/opt/Macaron/resources/app.asar/out/renderer";
  const origin = createAppOrigin({ rendererDir });
  const inside = (path: string): string => pathToFileURL(`${rendererDir}/${path}`).href;

  it("loads index.html from the renderer folder", () => {
    expect(origin.entryUrl).toBe(inside("index.html"));
    expect(origin.isDevServer).toBe(false);
    expect(origin.devServerOrigin).toBeNull();
  });

  it("accepts files of the renderer folder, with query or hash", () => {
    expect(origin.isAppUrl(inside("index.html"))).toBe(true);
    expect(origin.isAppUrl(`${inside("index.html")}#/conversations/1`)).toBe(true);
    expect(origin.isAppUrl(`${inside("assets/app.js")}?v=2`)).toBe(true);
  });

  it("refuses files outside the folder, sibling folders with the same prefix and path climbing", () => {
    expect(origin.isAppUrl("file:///etc/passwd")).toBe(false);
    expect(origin.isAppUrl(pathToFileURL(`${rendererDir}-evil/index.html`).href)).toBe(false);
    expect(origin.isAppUrl(`${pathToFileURL(rendererDir).href}/../../secret.html`)).toBe(false);
    expect(origin.isAppUrl(`${pathToFileURL(rendererDir).href}/%2e%2e/secret.html`)).toBe(false);
  });

  it("refuses web URLs and garbage", () => {
    expect(origin.isAppUrl("https://example.com/index.html")).toBe(false);
    expect(origin.isAppUrl("not a url")).toBe(false);
    expect(origin.isAppUrl("")).toBe(false);
  });
});

describe("createAppOrigin (dev server)", () => {
  const origin = createAppOrigin({ devServerUrl: "http://localhost:5173", rendererDir: "/unused" });

  it("loads the dev server and accepts only its origin", () => {
    expect(origin.entryUrl).toBe("http://localhost:5173/");
    expect(origin.isDevServer).toBe(true);
    expect(origin.devServerOrigin).toBe("http://localhost:5173");
    expect(origin.isAppUrl("http://localhost:5173/src/main.tsx")).toBe(true);
    expect(origin.isAppUrl("http://localhost:5174/")).toBe(false);
    expect(origin.isAppUrl("http://localhost.evil.com:5173/")).toBe(false);
    expect(origin.isAppUrl("file:///unused/index.html")).toBe(false);
  });

  it("rejects a dev server URL that is not http(s)", () => {
    expect(() => createAppOrigin({ devServerUrl: "file:///tmp/x", rendererDir: "/r" })).toThrow(/http/);
  });
});
