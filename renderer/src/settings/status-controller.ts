/**
 * A Settings section that shows one status the main side keeps (the engine build, the local API
 * server): loaded once, kept live by its event, changed by calls that answer the new status.
 * Each section's controller extends it with its own calls.
 */
import { createStore } from "zustand/vanilla";
import type { StoreApi } from "zustand/vanilla";
import { errorMessage } from "../api";

export interface StatusState<T> {
  /** null until the first status arrived. */
  status: T | null;
  /** A call that failed (the status's own failure, if any, is part of the status). */
  error: string | null;
  busy: boolean;
}

export class StatusController<T> {
  readonly store: StoreApi<StatusState<T>> = createStore<StatusState<T>>()(() => ({
    status: null,
    error: null,
    busy: false,
  }));
  private readonly disposers: Array<() => void> = [];

  constructor(
    subscribe: (onStatus: (status: T) => void) => () => void,
    private readonly fetch: () => Promise<T>,
  ) {
    this.disposers.push(subscribe((status) => this.store.setState({ status })));
  }

  dispose(): void {
    for (const dispose of this.disposers.splice(0)) dispose();
  }

  async load(): Promise<void> {
    try {
      const status = await this.fetch();
      this.store.setState({ status, error: null });
    } catch (error) {
      this.store.setState({ error: errorMessage(error) });
    }
  }

  /** Runs a call that answers the new status; resolves false when it failed (the error is shown). */
  protected async run(call: () => Promise<T>): Promise<boolean> {
    this.store.setState({ busy: true, error: null });
    try {
      const status = await call();
      this.store.setState({ status });
      return true;
    } catch (error) {
      this.store.setState({ error: errorMessage(error) });
      return false;
    } finally {
      this.store.setState({ busy: false });
    }
  }
}
