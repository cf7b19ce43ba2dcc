import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../api";
import { testDir } from "../../../testing/core/temp-dir";
import { copyIntoFolder, removeUnfinishedCopies } from "./adapter-files";

const folder = () => testDir("macaron-adapter-files-");

describe("copyIntoFolder", () => {
  it("copies under the final name and leaves no temp file", async () => {
    const root = folder();
    const src = join(root, "src.gguf");
    writeFileSync(src, "adapter bytes");
    const dest = await copyIntoFolder(src, join(root, "adapters"), "chat-1234.gguf", 13, "adapter");
    expect(dest).toBe(join(root, "adapters", "chat-1234.gguf"));
    expect(readFileSync(dest, "utf8")).toBe("adapter bytes");
    expect(readdirSync(join(root, "adapters"))).toEqual(["chat-1234.gguf"]);
  });

  it("fails with a clear error and leaves nothing when the copy is short or the source is gone", async () => {
    const root = folder();
    const src = join(root, "src.gguf");
    writeFileSync(src, "adapter bytes");
    const dir = join(root, "adapters");
    // The file changed between its check and the copy: the size no longer matches.
    const short = copyIntoFolder(src, dir, "a.gguf", 999, "version");
    await expect(short).rejects.toBeInstanceOf(ApiError);
    await expect(short).rejects.toThrow(/Could not copy the version into .*copied 13 of 999 bytes/);
    await expect(copyIntoFolder(join(root, "gone.gguf"), dir, "b.gguf", 1, "adapter")).rejects.toThrow(
      /Could not copy the adapter/,
    );
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("copyIntoFolder on a file that is not regular", () => {
  it("refuses a FIFO at once (no copy waiting for a writer) and leaves nothing", async () => {
    const root = folder();
    const fifo = join(root, "swapped.gguf");
    execFileSync("mkfifo", [fifo]);
    const dir = join(root, "adapters");
    // As when the file was swapped for a FIFO after its checks: copyFile would block here.
    const copy = copyIntoFolder(fifo, dir, "a.gguf", 13, "adapter");
    await expect(copy).rejects.toMatchObject({ code: "invalid_input" });
    await expect(copy).rejects.toThrow(/swapped\.gguf" is a named pipe \(FIFO\), not a regular file/);
    expect(readdirSync(dir)).toEqual([]);
  }, 5_000);

  it("copies a regular file through a symlink, private to the user", async () => {
    const root = folder();
    const src = join(root, "src.gguf");
    writeFileSync(src, "adapter bytes", { mode: 0o644 });
    symlinkSync(src, join(root, "link.gguf"));
    const dest = await copyIntoFolder(
      join(root, "link.gguf"),
      join(root, "adapters"),
      "b.gguf",
      13,
      "adapter",
    );
    expect(readFileSync(dest, "utf8")).toBe("adapter bytes");
    if (process.platform !== "win32") expect(statSync(dest).mode & 0o777).toBe(0o600);
  });
});

describe("removeUnfinishedCopies", () => {
  it("deletes only the temp files of interrupted copies", async () => {
    const dir = folder();
    mkdirSync(dir, { recursive: true });
    const leftovers = [".copy-0123456789ab.tmp", ".install-abcdef012345.tmp", ".version-00aa11bb22cc.tmp"];
    const kept = ["chat-0123456789ab.gguf", "notes.tmp", ".copy-short.tmp"];
    for (const name of [...leftovers, ...kept]) writeFileSync(join(dir, name), "x");
    expect(await removeUnfinishedCopies(dir)).toBe(3);
    expect(readdirSync(dir).sort()).toEqual([...kept].sort());
    expect(await removeUnfinishedCopies(join(dir, "missing"))).toBe(0);
  });
});
