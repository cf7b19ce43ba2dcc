import type { EngineProcess, SpawnEngine } from "../core/engine/types";

export interface EarlyEngine {
  /** Gives the process forked early to the first call, a fresh one to every later call (restarts). */
  spawnEngine: SpawnEngine;
  /** Kills the early process if nobody took it (the server failed to start). */
  dispose(): void;
}

/**
 * Forks the engine now, before the server has loaded its modules and opened the database: the
 * child's own start (Node, node-llama-cpp and its binary, the warm-up) then runs while the
 * server gets ready instead of after it. What the child says before the supervisor listens
 * (its "ready", an early exit) is kept and replayed to the first listener, so none is lost.
 */
export function earlyEngine(spawn: SpawnEngine): EarlyEngine {
  const proc = spawn();
  const messages: unknown[] = [];
  const messageListeners: ((message: unknown) => void)[] = [];
  let exited: [number | null, string | null] | null = null;
  const exitListeners: ((code: number | null, signal: string | null) => void)[] = [];
  proc.onMessage((message) => {
    if (messageListeners.length === 0) messages.push(message);
    for (const listener of messageListeners) listener(message);
  });
  proc.onExit((code, signal) => {
    exited = [code, signal];
    for (const listener of exitListeners) listener(code, signal);
  });
  const early: EngineProcess = {
    send: (message) => proc.send(message),
    onMessage(listener) {
      messageListeners.push(listener);
      for (const message of messages.splice(0)) listener(message);
    },
    onExit(listener) {
      exitListeners.push(listener);
      if (exited) listener(...exited);
    },
    kill: () => proc.kill(),
    get pid() {
      return proc.pid;
    },
  };
  let taken = false;
  return {
    spawnEngine: () => {
      if (taken) return spawn();
      taken = true;
      return early;
    },
    dispose: () => {
      if (!taken) proc.kill();
      taken = true;
    },
  };
}
