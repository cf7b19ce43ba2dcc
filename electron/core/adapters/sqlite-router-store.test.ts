import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../db/database";
import { textHash } from "../router";
import { routerStoreContract } from "../../../testing/contracts/router-store.contract";
import { suiteDir } from "../../../testing/core/temp-dir";
import { SqliteRouterStore } from "./sqlite-router-store";

const dir = suiteDir("macaron-router-store-");
const opened: { close(): void }[] = [];
afterAll(() => {
  for (const db of opened) db.close();
});
let n = 0;
function fresh(): SqliteRouterStore {
  const db = openDatabase(join(dir.path, `store-${n++}.db`));
  opened.push(db);
  return new SqliteRouterStore(db);
}

routerStoreContract("SQLite", fresh);

describe("SqliteRouterStore", () => {
  it("keeps vectors and learned examples across a reopen, and looks up many hashes at once", () => {
    const path = join(dir.path, "reopen.db");
    const db = openDatabase(path);
    const store = new SqliteRouterStore(db);
    const many = new Map(
      Array.from({ length: 450 }, (_, i) => [textHash(`t${i}`), Float32Array.from([i, -i, i / 7])] as const),
    );
    store.putVectors("m", many);
    store.addLearned({ textHash: textHash("x"), text: "x", adapterId: "ui", createdAt: 12.5 }, 5);
    db.close();
    const again = openDatabase(path);
    opened.push(again);
    const reopened = new SqliteRouterStore(again);
    const hits = reopened.getVectors("m", [...many.keys(), textHash("absent")]);
    expect(hits.size).toBe(450);
    expect(Array.from(hits.get(textHash("t449")) ?? [])).toEqual(
      Array.from(Float32Array.from([449, -449, 449 / 7])),
    );
    expect(reopened.listLearned()).toEqual([
      { textHash: textHash("x"), text: "x", adapterId: "ui", createdAt: 12.5 },
    ]);
  });
});
