/**
 * The database screen: when core could not open the conversation database (corrupt, or made
 * by a newer version), every other call fails with "database_unavailable". This controller
 * reads database.status and offers restoring a backup or starting fresh (core always keeps
 * the damaged file). After a recovery the app reloads its state through `onRecovered`.
 */
import { createStore } from "zustand/vanilla";
import type { StoreApi } from "zustand/vanilla";
import type { DatabaseStatus } from "../../../electron/api";
import { errorMessage } from "../api";
import type { RendererApi } from "../api";

export interface DatabaseViewState {
  /** The last status read; the screen shows while its state is not "ok". */
  status: DatabaseStatus | null;
  busy: boolean;
  error: string | null;
}

export type DatabaseStore = StoreApi<DatabaseViewState>;

/** True for an error that says the database cannot be used (any call may answer it). */
export function isDatabaseUnavailable(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "database_unavailable";
}

export class DatabaseController {
  readonly store: DatabaseStore = createStore<DatabaseViewState>()(() => ({
    status: null,
    busy: false,
    error: null,
  }));

  constructor(
    private readonly api: RendererApi,
    private readonly onRecovered: () => Promise<void>,
  ) {}

  /**
   * Read the status; resolves true when the app can go on. A server that cannot say (an
   * older core, a network failure) is not blocked here: the normal start reports those.
   */
  async check(): Promise<boolean> {
    try {
      const status = await this.api.call("database.status", {});
      this.store.setState({ status, error: null });
      return status.state === "ok";
    } catch {
      return true;
    }
  }

  /** Replace the damaged database with the backup `id`, then reload the app. */
  restoreBackup(id: string): Promise<boolean> {
    return this.recover(() => this.api.call("database.restoreBackup", { id }));
  }

  /** Move the damaged file aside (kept) and start with an empty database, then reload. */
  startFresh(): Promise<boolean> {
    return this.recover(() => this.api.call("database.startFresh", {}));
  }

  private async recover(action: () => Promise<DatabaseStatus>): Promise<boolean> {
    if (this.store.getState().busy) return false;
    this.store.setState({ busy: true, error: null });
    try {
      const status = await action();
      this.store.setState({ status });
      if (status.state !== "ok") {
        this.store.setState({ error: status.message ?? "The database still cannot be opened." });
        return false;
      }
      await this.onRecovered();
      return true;
    } catch (error) {
      this.store.setState({ error: errorMessage(error) });
      return false;
    } finally {
      this.store.setState({ busy: false });
    }
  }
}
