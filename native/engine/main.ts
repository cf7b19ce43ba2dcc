// Entry of the engine process (child_process.fork or Electron utilityProcess).
import { engineThreads, loadLlamaBackend } from "./llama-backend";
import { detectParentChannel } from "./parent-channel";
import { EngineRuntime } from "./runtime";

const channel = detectParentChannel();
if (!channel) {
  process.stderr.write("The engine must be started by Macaron (fork or utilityProcess), not directly.\n");
  process.exit(2);
}
const threads = engineThreads();
const runtime = new EngineRuntime(
  (message) => channel.send(message),
  () => loadLlamaBackend(threads),
);
channel.onMessage((message) => void runtime.handle(message));
channel.onDisconnect(() => {
  void runtime.dispose().finally(() => process.exit(0));
});
runtime.warmUp();
channel.send({ type: "ready", pid: process.pid });
