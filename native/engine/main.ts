// Entry of the engine process (child_process.fork or Electron utilityProcess).
import { pinEngineThreads } from "./affinity";
import { engineThreads, loadLlamaBackend } from "./llama-backend";
import { detectParentChannel } from "../../common/parent-channel";
import type { EngineMessage } from "../../common/engine-protocol";
import { EngineRuntime } from "./runtime";

/** How long a parent-less engine may take to dispose of its model before it exits anyway. */
const DISPOSE_DEADLINE_MS = 10_000;

const channel = detectParentChannel<EngineMessage>();
if (!channel) {
  process.stderr.write("The engine must be started by Macaron (fork or utilityProcess), not directly.\n");
  process.exit(2);
}
const threads = engineThreads();
// Before llama.cpp loads: the threads it and libuv create inherit the mask (affinity.ts).
const affinity = pinEngineThreads(threads);
if (affinity.pinned === null && affinity.reason === "taskset-failed")
  process.stderr.write(
    "[engine] could not keep the engine's threads on their cores (taskset failed); running unpinned\n",
  );
const runtime = new EngineRuntime(
  (message) => channel.send(message),
  () => loadLlamaBackend(threads),
);
channel.onMessage((message) => void runtime.handle(message));
// Ctrl-C in a terminal reaches the whole process group: the parent closes the engine in order
// (the conversations' caches are saved first); a parent that is gone ends it (disconnect). A
// second Ctrl-C means now, as it does for the parent.
let interrupts = 0;
process.on("SIGINT", () => {
  if (++interrupts > 1) process.exit(130);
});
channel.onDisconnect(() => {
  // A load or a save in progress finishes first, within a bound: a hung one (a driver, a network
  // folder) must not keep the engine, and its memory, after its parent is gone.
  setTimeout(() => process.exit(0), DISPOSE_DEADLINE_MS).unref();
  void runtime.dispose().finally(() => process.exit(0));
});
runtime.warmUp();
channel.send({ type: "ready", pid: process.pid });
