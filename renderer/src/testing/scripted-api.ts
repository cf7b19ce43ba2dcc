/**
 * A unit-test stand-in for core: each method answers from a handler the test gives (a missing
 * one fails like an unknown method), calls are recorded, events are emitted by hand.
 */
import { ApiError } from "../../../electron/api";
import type { EventName, EventPayload, MethodInput, MethodName, MethodOutput } from "../../../electron/api";
import type { RendererApi } from "../api";
import { EventFanout } from "../api/event-fanout";

export type ScriptedHandlers = {
  [M in MethodName]?: (input: MethodInput<M>) => MethodOutput<M> | Promise<MethodOutput<M>>;
};

export class ScriptedApi implements RendererApi {
  readonly platform = { kind: "browser" as const };
  readonly calls: Array<[MethodName, unknown]> = [];
  private readonly fanout = new EventFanout();

  constructor(public handlers: ScriptedHandlers = {}) {}

  call<M extends MethodName>(method: M, input: MethodInput<M>): Promise<MethodOutput<M>> {
    this.calls.push([method, input]);
    const handler = this.handlers[method] as ((input: MethodInput<M>) => MethodOutput<M>) | undefined;
    // A promise chain so a thrown ApiError becomes a rejection, like a real transport's.
    return Promise.resolve().then(() => {
      if (!handler) throw new ApiError("unknown_method", `No handler for ${method}`);
      return handler(input);
    });
  }

  on<E extends EventName>(event: E, listener: (payload: EventPayload<E>) => void): () => void {
    return this.fanout.add(event, listener);
  }

  emit<E extends EventName>(event: E, payload: EventPayload<E>): void {
    this.fanout.dispatch(event, payload);
  }

  /** The inputs of every call of `method`, in order. */
  inputs<M extends MethodName>(method: M): Array<MethodInput<M>> {
    return this.calls.filter(([m]) => m === method).map(([, input]) => input as MethodInput<M>);
  }

  dispose(): void {}
}
