import type { EngineMessage } from "../../common/engine-protocol";

/** How the engine talks to its parent process. */
export interface ParentChannel {
  readonly kind: "fork" | "utility";
  send(message: EngineMessage): void;
  onMessage(listener: (message: unknown) => void): void;
  /** Called when the parent goes away, so the engine does not outlive it. */
  onDisconnect(listener: () => void): void;
}

/** The subset of Electron's `process.parentPort` we use; typed here to avoid importing electron. */
interface ElectronParentPort {
  on(event: "message", listener: (event: { data: unknown }) => void): void;
  postMessage(message: unknown): void;
}

/**
 * Detect the channel at runtime: Electron's utilityProcess exposes `process.parentPort`,
 * child_process.fork gives `process.send`. Returns null when started without a parent.
 */
export function detectParentChannel(proc: NodeJS.Process = process): ParentChannel | null {
  const parentPort = (proc as NodeJS.Process & { parentPort?: ElectronParentPort }).parentPort;
  if (parentPort) {
    return {
      kind: "utility",
      send: (message) => parentPort.postMessage(message),
      onMessage: (listener) => parentPort.on("message", (event) => listener(event.data)),
      // Electron kills a utility process together with its parent; nothing to watch.
      onDisconnect: () => {},
    };
  }
  const send = proc.send?.bind(proc);
  if (send) {
    return {
      kind: "fork",
      send: (message) => {
        if (proc.connected) send(message);
      },
      onMessage: (listener) => proc.on("message", listener),
      onDisconnect: (listener) => proc.on("disconnect", listener),
    };
  }
  return null;
}
