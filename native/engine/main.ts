// Entry of the engine process (child_process.fork or Electron utilityProcess).
import { pinEngineThreads } from "./affinity";
import { engineThreads, loadLlamaBackend } from "./llama-backend";
import { detectParentChannel } from "../../common/parent-channel";
import type { EngineMessage } from "../../common/engine-protocol";
import { EngineRuntime } from "./runtime";

const channel = detectParentChannel<EngineMessage>();
if (!channel) {
  process.stderr.write("The engine must be started by Macaron (fork or utilityProcess), not directly.\n");
  process.exit(2);
}
const threads = engineThreads();
let pinned = false;
// After the first load, not before: while the model loads, the main thread resolves the chat
// format on another core than the pool thread that allocates the context's KV cache
// (ModelSession.open). `taskset -a` takes every thread there is then; later ones inherit the
// mask (affinity.ts).
const pinAfterLoad = (): void => {
  if (pinned) return;
  pinned = true;
  const affinity = pinEngineThreads(threads);
  if (affinity.pinned === null && affinity.reason === "taskset-failed")
    process.stderr.write(
      "[engine] could not keep the engine's threads on their cores (taskset failed); running unpinned\n",
    );
};
const runtime = new EngineRuntime(
  (message) => channel.send(message),
  () => loadLlamaBackend(threads),
  { afterLoad: pinAfterLoad },
);
channel.onMessage((message) => void runtime.handle(message));
channel.onDisconnect(() => {
  void runtime.dispose().finally(() => process.exit(0));
});
runtime.warmUp();
channel.send({ type: "ready", pid: process.pid });
