/**
 * Electron mode: the preload's bridge (`window.macaron`). Results come back as envelopes so
 * that the ApiError code survives the IPC boundary (thrown errors lose their fields there).
 */
import { ApiError } from "../../../electron/api";
import type {
  EventName,
  EventPayload,
  MethodInput,
  MethodName,
  MethodOutput,
  PreloadBridge,
} from "../../../electron/api";
import type { RendererApi } from "./connection";
import { unwrapResult } from "./envelope";
import { EventFanout } from "./event-fanout";

export class IpcApiClient implements RendererApi {
  readonly platform: RendererApi["platform"];
  private readonly fanout = new EventFanout();
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly bridge: PreloadBridge) {
    this.platform = {
      kind: "electron",
      pickModelFile: () => bridge.pickModelFile(),
      openExternal: (url: string) => bridge.openExternal(url),
    };
  }

  /** Invoke over IPC; resolves with the value or rejects with the core's ApiError. */
  async call<M extends MethodName>(method: M, input: MethodInput<M>): Promise<MethodOutput<M>> {
    let raw: unknown;
    try {
      raw = await this.bridge.invoke(method, input ?? {});
    } catch (error) {
      throw new ApiError(
        "internal",
        error instanceof Error ? error.message : "The app's core did not answer.",
      );
    }
    return unwrapResult<MethodOutput<M>>(raw);
  }

  /** Subscribe to an event; one bridge subscription serves every listener. */
  on<E extends EventName>(event: E, listener: (payload: EventPayload<E>) => void): () => void {
    const dispose = this.fanout.add(event, listener);
    this.unsubscribe ??= this.bridge.subscribe((name, payload) => this.fanout.dispatch(name, payload));
    return dispose;
  }

  dispose(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.fanout.clear();
  }
}
