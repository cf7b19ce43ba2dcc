import { describe, expect, it } from "vitest";
import { stalePaths, type Repo } from "./check-doc-paths.mjs";

/** A repository of these files (paths from the root); `ignored`: paths git ignores. */
function repo(files: string[], ignored: string[] = []): Repo {
  const folders = new Set(
    files.flatMap((f) =>
      f
        .split("/")
        .slice(0, -1)
        .map((_, i, p) => p.slice(0, i + 1).join("/")),
    ),
  );
  return {
    exists: (p) => files.includes(p) || folders.has(p.replace(/\/$/, "")),
    ignored: (p) => ignored.some((i) => p === i || p.startsWith(`${i}/`)),
    trackedNames: new Set(files.map((f) => f.slice(f.lastIndexOf("/") + 1))),
    rootFiles: files.filter((f) => !f.includes("/")),
  };
}

const REPO = repo(
  [
    "ARCHITECTURE.md",
    "README.md",
    "vitest.config.ts",
    "tsconfig.node.json",
    "package.json",
    "docs/README.md",
    "docs/screenshots/chat.png",
    "scripts/check-doc-paths.mjs",
    "electron/main/index.ts",
    "electron/core/mcp/message-worker.ts",
  ],
  ["node_modules", "resources/demo/adapters"],
);

const stale = (doc: string, ...lines: string[]) => stalePaths(doc, lines.join("\n"), REPO);

describe("check-doc-paths", () => {
  it("paths from the root: of our folders only, a module without its extension", () => {
    expect(
      stale(
        "README.md",
        "`electron/main/index.ts`, electron/main/index, `electron/main/`, scripts/check-doc-paths.mjs.",
        "`electron/main/gone.ts` and [x](scripts/gone.mjs)",
        "https://example.com/electron/x.ts, GET /v1/export/raw/x.jsonl, out/main/index.js",
      ),
    ).toEqual([
      { line: 2, path: "electron/main/gone.ts" },
      { line: 2, path: "scripts/gone.mjs" },
    ]);
  });

  it("relative paths: from the doc's folder or the root, inside the repository", () => {
    expect(
      stale(
        "docs/README.md",
        "[arch](../ARCHITECTURE.md), ![chat](./screenshots/chat.png), `../electron/main/`",
        "run `./scripts/check-doc-paths.mjs`; see ../../elsewhere/x.ts and https://x.org/a/../b.md",
        "[gone](../electron/gone/x.ts), `./scripts/gone.mjs`, ../ARCHITECTUR.md",
      ),
    ).toEqual([
      { line: 3, path: "../electron/gone/x.ts" },
      { line: 3, path: "./scripts/gone.mjs" },
      { line: 3, path: "../ARCHITECTUR.md" },
    ]);
  });

  it("bare file names: ours must exist; others only when named like a root file", () => {
    expect(
      stale(
        "ARCHITECTURE.md",
        "`vitest.config.ts`, README.md, `message-worker.ts`, tsconfig.node.json, package.json",
        "PEFT's `adapter_config.json`, the registry's `index.json`, Node.js, engine.js, example.com",
        "`vitest.confg.ts` and ARCHITECTUR.md, `request-schema.test.ts`, `tsconfig.nod.json`",
      ),
    ).toEqual([
      { line: 3, path: "vitest.confg.ts" },
      { line: 3, path: "ARCHITECTUR.md" },
      { line: 3, path: "request-schema.test.ts" },
      { line: 3, path: "tsconfig.nod.json" },
    ]);
  });

  it("leaves code blocks, placeholders, globs and ignored or generated paths alone", () => {
    expect(
      stale(
        "README.md",
        "```sh",
        "node ./scripts/my-own.mjs electron/whatever.ts my-notes.md",
        "```",
        "`scripts/<name>.ts`, `electron/main/*.test.ts`, `electron/main/{a,b}.ts`, `<id>.md`, `*.test.ts`",
        "`resources/demo/adapters/coding.gguf`, `./node_modules/.bin/vitest`, bench/results/x.json",
      ),
    ).toEqual([]);
  });
});
