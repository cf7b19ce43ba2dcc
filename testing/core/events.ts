import type { EventName, EventPayload } from "../../electron/api";
import type { EventListener } from "../../electron/core/core-types";

type Subscribe = (listener: EventListener) => () => void;

/** Records every event and resolves waits on specific ones (readiness, not sleeps). */
export class EventRecorder {
  readonly events: { event: EventName; payload: unknown }[] = [];
  private waiters: { event: EventName; match: (p: unknown) => boolean; resolve: (p: unknown) => void }[] = [];
  readonly dispose: () => void;

  constructor(subscribe: Subscribe) {
    this.dispose = subscribe((event, payload) => {
      this.events.push({ event, payload });
      this.waiters = this.waiters.filter((w) => {
        if (w.event !== event || !w.match(payload)) return true;
        w.resolve(payload);
        return false;
      });
    });
  }

  /** Payloads of one event kind, in order. */
  of<E extends EventName>(event: E): EventPayload<E>[] {
    return this.events.filter((e) => e.event === event).map((e) => e.payload as EventPayload<E>);
  }

  /** The next `event` (after now) whose payload matches. */
  next<E extends EventName>(
    event: E,
    match: (p: EventPayload<E>) => boolean = () => true,
  ): Promise<EventPayload<E>> {
    return new Promise((resolve) => {
      this.waiters.push({
        event,
        match: match as (p: unknown) => boolean,
        resolve: resolve as (p: unknown) => void,
      });
    });
  }
}
