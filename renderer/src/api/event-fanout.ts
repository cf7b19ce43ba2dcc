/**
 * Per-event listener sets behind one transport subscription, so that a component can subscribe
 * to a single event while the transport delivers all of them through one channel.
 */
import { isEventName } from "../../../electron/api";
import type { EventName, EventPayload } from "../../../electron/api";
import { parseEvent } from "./envelope";

type AnyListener = (payload: never) => void;

export class EventFanout {
  private readonly listeners = new Map<EventName, Set<AnyListener>>();

  /** Add a listener; returns a disposer. */
  add<E extends EventName>(event: E, listener: (payload: EventPayload<E>) => void): () => void {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }

  /** Validate and deliver one incoming event; unknown names and invalid payloads are dropped. */
  dispatch(event: unknown, payload: unknown): boolean {
    if (!isEventName(event)) return false;
    const set = this.listeners.get(event);
    const parsed = parseEvent(event, payload);
    if (parsed === null) {
      console.warn(`Dropped an invalid "${event}" event`);
      return false;
    }
    if (!set) return true;
    for (const listener of [...set]) {
      try {
        (listener as (p: unknown) => void)(parsed);
      } catch (error) {
        // One broken listener must not starve the others of the stream.
        console.error(`Listener for "${event}" failed`, error);
      }
    }
    return true;
  }

  get size(): number {
    let n = 0;
    for (const set of this.listeners.values()) n += set.size;
    return n;
  }

  clear(): void {
    this.listeners.clear();
  }
}
