import { onTestFinished } from "vitest";
import { assembleCore, type Core, type CoreParts } from "../../electron/core/index";
import { EventRecorder } from "./events";
import { FakeEngine } from "../engine/fake-engine";
import { value } from "./result-value";
import { testDir } from "./temp-dir";
import { FIXTURE_DEMO } from "./fixture-demo";

const ctx = { transport: "ipc" } as const;

export interface FakeCore {
  core: Core;
  engine: FakeEngine;
  events: EventRecorder;
  dataDir: string;
  /** Dispatch `method` and unwrap its ok value (throws on an error result). */
  call: <T>(method: string, input: unknown) => Promise<T>;
}

/**
 * Core over a scripted FakeEngine on a fresh data folder, with the demo model open. Call it
 * inside a test: core is closed and the folder deleted when the test finishes.
 */
export async function startFakeCore(parts: Partial<Omit<CoreParts, "dataDir">> = {}): Promise<FakeCore> {
  // Removed after core is closed: onTestFinished runs the cleanups registered later first.
  const dataDir = testDir();
  const engine = new FakeEngine();
  const core = await assembleCore({ dataDir, log: () => undefined, ...FIXTURE_DEMO, ...parts }, () => engine);
  onTestFinished(() => core.close());
  const events = new EventRecorder((l) => core.subscribe(l));
  const call = async <T>(method: string, input: unknown): Promise<T> =>
    value<T>(await core.dispatch(method, input, ctx));
  await call("models.openDemo", {});
  return { core, engine, events, dataDir, call };
}
