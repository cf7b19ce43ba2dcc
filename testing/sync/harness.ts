/** Shared set-up of the sync tests and benchmark: a real cloud service, an outbox, a fast clock. */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { startCloud, type CloudOptions, type RunningCloud } from "../../cloud/server";
import { FeedbackSync, type FeedbackSyncDeps } from "../../electron/core/feedback/sync/feedback-sync";
import { QueuedOutbox } from "./queued-outbox";
import { tempDir } from "../core/temp-dir";

/** A clock whose sleeps return at once and move virtual time forward; every sleep is recorded. */
export function fastClock(start = 1_700_000_000_000) {
  let t = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => t,
    sleep: async (ms: number): Promise<void> => {
      sleeps.push(ms);
      t += ms;
      // Yield a macrotask so sockets and timers get their turn, like a real wait would.
      await new Promise((r) => setImmediate(r));
    },
  };
}

export interface SyncRig {
  dir: string;
  cloud: RunningCloud;
  outboxPath: string;
  outbox: QueuedOutbox;
  installId: string;
  tokens: { value: string | null };
  clock: ReturnType<typeof fastClock>;
  /** A FeedbackSync wired to the rig; `endpoint` defaults to the cloud's URL. */
  sync(over?: Partial<FeedbackSyncDeps>): FeedbackSync;
  close(): Promise<void>;
}

export async function startRig(cloudOpts: Partial<CloudOptions> = {}): Promise<SyncRig> {
  // The benchmark shares this rig, so its folder goes with close(), not with a vitest hook.
  const { path: dir, remove } = tempDir("macaron-sync-");
  const cloud = await startCloud({ dataDir: join(dir, "cloud"), adminKey: "admin-key-1234", ...cloudOpts });
  const outboxPath = join(dir, "outbox.db");
  const outbox = QueuedOutbox.open(outboxPath);
  const tokens = { value: null as string | null };
  const clock = fastClock();
  const installId = randomUUID();
  const syncs: FeedbackSync[] = [];
  return {
    dir,
    cloud,
    outboxPath,
    outbox,
    installId,
    tokens,
    clock,
    sync(over = {}) {
      const s = new FeedbackSync({
        outbox,
        endpoint: cloud.url,
        getInstall: () => ({ installId }),
        getToken: () => tokens.value,
        setToken: (t) => void (tokens.value = t),
        isEnabled: () => true,
        now: clock.now,
        sleep: clock.sleep,
        random: () => 0.5,
        requestTimeoutMs: 5000,
        ...over,
      });
      syncs.push(s);
      return s;
    },
    async close() {
      await Promise.all(syncs.map((s) => s.stop()));
      outbox.close();
      await cloud.close();
      remove();
    },
  };
}
