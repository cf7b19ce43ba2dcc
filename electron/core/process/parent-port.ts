/**
 * The child's side of node-child.ts: how a script started by either implementation talks to
 * its parent. Electron's utility process has `process.parentPort` (messages arrive as
 * `{ data }`); child_process.fork gives `process.send` and "message" events. Types only from
 * Node: no import of electron.
 */

export interface ParentPort {
  readonly kind: "fork" | "utility";
  send(message: unknown): void;
  onMessage(listener: (message: unknown) => void): void;
  /** The parent went away (fork only: Electron ends a utility process with its parent). */
  onDisconnect(listener: () => void): void;
}

interface ElectronParentPort {
  on(event: "message", listener: (event: { data: unknown }) => void): void;
  postMessage(message: unknown): void;
}

/** The channel to the parent, or null when the script was started without one. */
export function parentPort(proc: NodeJS.Process = process): ParentPort | null {
  const port = (proc as NodeJS.Process & { parentPort?: ElectronParentPort }).parentPort;
  if (port) {
    return {
      kind: "utility",
      send: (message) => port.postMessage(message),
      onMessage: (listener) => port.on("message", (event) => listener(event.data)),
      onDisconnect: () => undefined,
    };
  }
  const send = proc.send?.bind(proc);
  if (!send) return null;
  return {
    kind: "fork",
    send: (message) => {
      if (proc.connected) send(message);
    },
    onMessage: (listener) => void proc.on("message", listener),
    onDisconnect: (listener) => void proc.on("disconnect", listener),
  };
}
