import { utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sha256File } from "../../../common/hashing";
import { openDatabase } from "../db/database";
import { SettingsStore } from "../settings/settings-store";
import { suiteDir } from "../../../testing/core/temp-dir";
import { ModelFingerprint } from "./model-fingerprint";

const dir = suiteDir("macaron-fingerprint-");

describe("ModelFingerprint", () => {
  it("hashes a file once, remembers it by path+size+mtime across restarts, and rehashes a changed file", async () => {
    const db = openDatabase(join(dir.path, "f.db"));
    const settings = new SettingsStore(db);
    const model = join(dir.path, "m.gguf");
    writeFileSync(model, "model bytes");
    const hashed: string[] = [];
    const counting = (p: string) => (hashed.push(p), sha256File(p));
    const first = new ModelFingerprint(settings, counting);
    expect(first.knownSha256(model)).toBeNull();
    const [a, b] = await Promise.all([first.sha256(model), first.sha256(model)]);
    expect(a).toBe(await sha256File(model));
    expect(b).toBe(a);
    expect(first.knownSha256(model)).toBe(a);
    expect(hashed).toHaveLength(1);

    const second = new ModelFingerprint(settings, counting);
    expect(await second.sha256(model)).toBe(a);
    expect(hashed).toHaveLength(1); // from the cache

    writeFileSync(model, "other bytes");
    utimesSync(model, new Date(), new Date(Date.now() + 5000));
    const third = new ModelFingerprint(settings, counting);
    expect(await third.sha256(model)).toBe(await sha256File(model));
    expect(hashed).toHaveLength(2);
    db.close();
  });

  it("takes a sha256 computed elsewhere (a verified download) without hashing the file again", async () => {
    const db = openDatabase(join(dir.path, "g.db"));
    const model = join(dir.path, "downloaded.gguf");
    writeFileSync(model, "downloaded bytes");
    const hashed: string[] = [];
    const fingerprint = new ModelFingerprint(new SettingsStore(db), (p) => (hashed.push(p), sha256File(p)));
    const sha = await sha256File(model);
    await fingerprint.remember(model, sha);
    expect(fingerprint.cachedSha256(model)).toBe(sha);
    expect(await fingerprint.sha256(model)).toBe(sha);
    expect(hashed).toEqual([]);
    db.close();
  });
});
