import { describe, expect, it } from "vitest";
import { AdapterGroups } from "./adapter-groups";

/** Enter and record the order in which turns start. */
function enter(
  groups: AdapterGroups,
  started: string[],
  name: string,
  key: string,
  priority = false,
  signal?: AbortSignal,
) {
  return groups.enter(key, priority, signal).then((release) => {
    if (release) started.push(name);
    return release;
  });
}

describe("AdapterGroups", () => {
  it("runs same-set requests together up to the capacity; another set waits for the group to drain", async () => {
    const groups = new AdapterGroups(2);
    const started: string[] = [];
    const a1 = enter(groups, started, "a1", "A");
    const a2 = enter(groups, started, "a2", "A");
    const a3 = enter(groups, started, "a3", "A");
    const b = enter(groups, started, "b", "B");
    await Promise.resolve();
    expect(started).toEqual(["a1", "a2"]);
    expect(groups.active).toBe(2);
    expect(groups.queued).toBe(2);
    (await a1)!();
    await a3;
    expect(started).toEqual(["a1", "a2", "a3"]);
    (await a2)!();
    (await a3)!();
    (await b)!();
    expect(started).toEqual(["a1", "a2", "a3", "b"]);
    expect(groups.active).toBe(0);
    expect(groups.activeKey).toBeNull();
  });

  it("a same-set request queues behind a waiting other set (no starvation)", async () => {
    const groups = new AdapterGroups(4);
    const started: string[] = [];
    const a1 = await enter(groups, started, "a1", "A");
    const b = enter(groups, started, "b", "B");
    const a2 = enter(groups, started, "a2", "A");
    await Promise.resolve();
    expect(started).toEqual(["a1"]);
    a1!();
    (await b)!();
    (await a2)!();
    expect(started).toEqual(["a1", "b", "a2"]);
  });

  it("serves a waiting priority request (the app's chat) before waiting API requests", async () => {
    const groups = new AdapterGroups(4);
    const started: string[] = [];
    const a = await enter(groups, started, "a", "A");
    const api = enter(groups, started, "api", "B");
    const chat = enter(groups, started, "chat", "C", true);
    a!();
    (await chat)!();
    (await api)!();
    expect(started).toEqual(["a", "chat", "api"]);
  });

  it("a request aborted while it waits resolves null and no longer blocks those behind it", async () => {
    const groups = new AdapterGroups(4);
    const started: string[] = [];
    const a1 = await enter(groups, started, "a1", "A");
    const stop = new AbortController();
    const b = enter(groups, started, "b", "B", false, stop.signal);
    const a2 = enter(groups, started, "a2", "A");
    stop.abort();
    expect(await b).toBeNull();
    (await a2)!();
    a1!();
    expect(started).toEqual(["a1", "a2"]);
    expect(groups.active).toBe(0);
  });

  it("retired, it lets every waiter in at once, whatever its set, and says when it is idle", async () => {
    const groups = new AdapterGroups(1);
    const started: string[] = [];
    const a = enter(groups, started, "a", "A");
    const b = enter(groups, started, "b", "B");
    const c = enter(groups, started, "c", "A");
    await Promise.resolve();
    expect(started).toEqual(["a"]);
    let idle = false;
    const whenIdle = groups.whenIdle().then(() => (idle = true));
    groups.retire();
    await Promise.all([b, c]);
    expect(started).toEqual(["a", "b", "c"]);
    expect(groups.queued).toBe(0);
    (await b)!();
    (await c)!();
    await Promise.resolve();
    expect(idle).toBe(false);
    (await a)!();
    await whenIdle;
    expect(idle).toBe(true);
    expect(groups.active).toBe(0);
  });

  it("is idle at once when nothing runs", async () => {
    let idle = false;
    await new AdapterGroups(2).whenIdle().then(() => (idle = true));
    expect(idle).toBe(true);
  });
});
