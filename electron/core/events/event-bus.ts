import type { EventName, EventPayload } from "../../api";
import type { EventListener } from "../core-types";

/** Typed fan-out of core events. A throwing listener is logged and never breaks the emitter. */
export class EventBus {
  private readonly listeners = new Set<EventListener>();

  constructor(private readonly log: (message: string, err: unknown) => void = console.error) {}

  emit<E extends EventName>(event: E, payload: EventPayload<E>): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event, payload);
      } catch (err) {
        this.log(`event listener failed on ${event}`, err);
      }
    }
  }

  /** Subscribe to every event; returns a disposer. */
  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Drop every listener (core shutdown). */
  clear(): void {
    this.listeners.clear();
  }
}
