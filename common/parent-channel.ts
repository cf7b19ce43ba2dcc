/**
 * How a child process talks to its parent, started either way: Electron's utilityProcess
 * (`process.parentPort`, messages as `{ data }`) or child_process.fork (`process.send`). The
 * engine (native/engine/main.ts) and the app's Node helpers (electron/core/process) use it.
 */
export interface ParentChannel<M = unknown> {
  readonly kind: "fork" | "utility";
  send(message: M): void;
  onMessage(listener: (message: unknown) => void): void;
  /** Called when the parent goes away, so the child does not outlive it. */
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
export function detectParentChannel<M = unknown>(proc: NodeJS.Process = process): ParentChannel<M> | null {
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
      // With a callback a failed send (the parent gone just before `connected` says so: EPIPE)
      // is not an 'error' event, which nothing handles and which would crash the child with a
      // stack trace; the disconnect listener ends it.
      send: (message) => {
        if (proc.connected) send(message, undefined, undefined, () => undefined);
      },
      onMessage: (listener) => proc.on("message", listener),
      onDisconnect: (listener) => proc.on("disconnect", listener),
    };
  }
  return null;
}
