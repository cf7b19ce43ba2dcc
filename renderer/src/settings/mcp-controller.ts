/**
 * "Tools & MCP servers" (Settings): the servers the user added with their state, tools and
 * logs (mcp.*), the built-in tools, and each tool's on/off switch (tools.setEnabled). Servers
 * change by themselves (start, crash, tools listed): `mcp.changed` events keep the list live.
 * Owned by AppController; dispose() releases its subscription.
 */
import { createStore } from "zustand/vanilla";
import type { StoreApi } from "zustand/vanilla";
import type { McpServerSpec, McpServerStatus, ToolInfo } from "../../../electron/api";
import { errorMessage } from "../api";
import type { RendererApi } from "../api";
import { upsertServer } from "../chat/tool-logic";

export interface ImportOutcome {
  added: string[];
  errors: Array<{ name: string; message: string }>;
}

export interface McpState {
  /** null until the first mcp.list answered. */
  servers: McpServerStatus[] | null;
  /** The app's own tools (tools.list, server "builtin"); null until listed. */
  builtins: ToolInfo[] | null;
  /** Why the list could not be read. */
  loadError: string | null;
  /** Servers with a call in flight (restart, remove, a tool switch). */
  busy: readonly string[];
  /** The last failed action per server name ("builtin" for the built-in tools). */
  errors: Readonly<Record<string, string>>;
  /** Log lines per server, once the user asked for them. */
  logs: Readonly<Record<string, readonly string[]>>;
  adding: boolean;
  addError: string | null;
  importing: boolean;
  importOutcome: ImportOutcome | null;
  importError: string | null;
}

export type McpStore = StoreApi<McpState>;

const BUILTIN = "builtin";

export class McpController {
  readonly store: McpStore = createStore<McpState>()(() => ({
    servers: null,
    builtins: null,
    loadError: null,
    busy: [],
    errors: {},
    logs: {},
    adding: false,
    addError: null,
    importing: false,
    importOutcome: null,
    importError: null,
  }));
  private readonly disposers: Array<() => void> = [];

  constructor(private readonly api: RendererApi) {
    this.disposers.push(api.on("mcp.changed", ({ name, server }) => this.onChanged(name, server)));
  }

  dispose(): void {
    for (const dispose of this.disposers.splice(0)) dispose();
  }

  /** Read the servers and the built-in tools (Settings opened). */
  async load(): Promise<void> {
    try {
      const [servers, tools] = await Promise.all([
        this.api.call("mcp.list", {}),
        this.api.call("tools.list", {}),
      ]);
      this.store.setState({
        servers,
        builtins: tools.filter((t) => t.server === BUILTIN),
        loadError: null,
      });
    } catch (error) {
      this.store.setState({ loadError: errorMessage(error) });
    }
  }

  /** Add a server (core saves it, then starts it); true when added. */
  async add(name: string, spec: McpServerSpec): Promise<boolean> {
    this.store.setState({ adding: true, addError: null });
    try {
      const server = await this.api.call("mcp.add", { name, spec });
      this.put(server);
      return true;
    } catch (error) {
      this.store.setState({ addError: errorMessage(error) });
      return false;
    } finally {
      this.store.setState({ adding: false });
    }
  }

  /** Add the servers of an `mcpServers` JSON text; each bad entry is reported on its own. */
  async importJson(json: string): Promise<ImportOutcome | null> {
    if (!json.trim()) {
      this.store.setState({
        importError: "Paste an mcpServers JSON file or choose one first.",
        importOutcome: null,
      });
      return null;
    }
    this.store.setState({ importing: true, importError: null, importOutcome: null });
    try {
      const { added, errors } = await this.api.call("mcp.import", { json });
      for (const server of added) this.put(server);
      const outcome = { added: added.map((s) => s.name), errors };
      this.store.setState({ importOutcome: outcome });
      return outcome;
    } catch (error) {
      this.store.setState({ importError: errorMessage(error) });
      return null;
    } finally {
      this.store.setState({ importing: false });
    }
  }

  dismissImport(): void {
    this.store.setState({ importOutcome: null, importError: null });
  }

  restart(name: string): Promise<boolean> {
    return this.withBusy(name, async () => this.put(await this.api.call("mcp.restart", { name })));
  }

  remove(name: string): Promise<boolean> {
    return this.withBusy(name, async () => {
      await this.api.call("mcp.remove", { name });
      this.onChanged(name, null);
    });
  }

  /** Fetch (or refresh) a server's log lines. */
  loadLogs(name: string): Promise<boolean> {
    return this.withBusy(name, async () => {
      const { lines } = await this.api.call("mcp.logs", { name });
      this.store.setState((s) => ({ logs: { ...s.logs, [name]: lines } }));
    });
  }

  hideLogs(name: string): void {
    this.store.setState((s) => {
      const logs = { ...s.logs };
      delete logs[name];
      return { logs };
    });
  }

  /** Switch a tool on or off: shown at once, put back with the reason when core refuses. */
  setToolEnabled(server: string, name: string, enabled: boolean): Promise<boolean> {
    this.patchTool(server, name, enabled);
    return this.withBusy(server, async () => {
      try {
        const tool = await this.api.call("tools.setEnabled", { server, name, enabled });
        this.patchTool(server, name, tool.enabled);
      } catch (error) {
        this.patchTool(server, name, !enabled);
        throw error;
      }
    });
  }

  private onChanged(name: string, server: McpServerStatus | null): void {
    const { servers, logs } = this.store.getState();
    // Before the first list there is nothing to update: load() reads everything.
    if (servers === null) return;
    const before = servers.find((s) => s.name === name);
    this.store.setState({ servers: upsertServer(servers, name, server) });
    if (server === null) {
      this.hideLogs(name);
      this.clearError(name);
    } else if (logs[name] && before && before.logLines !== server.logLines) {
      void this.loadLogs(name);
    }
  }

  private put(server: McpServerStatus): void {
    this.store.setState((s) => ({ servers: upsertServer(s.servers ?? [], server.name, server) }));
  }

  private patchTool(server: string, name: string, enabled: boolean): void {
    const flip = (tools: readonly ToolInfo[]) =>
      tools.map((t) => (t.server === server && t.name === name ? { ...t, enabled } : t));
    this.store.setState((s) =>
      server === BUILTIN
        ? { builtins: s.builtins && flip(s.builtins) }
        : {
            servers:
              s.servers && s.servers.map((x) => (x.name === server ? { ...x, tools: flip(x.tools) } : x)),
          },
    );
  }

  private clearError(name: string): void {
    this.store.setState((s) => {
      if (!(name in s.errors)) return {};
      const errors = { ...s.errors };
      delete errors[name];
      return { errors };
    });
  }

  private async withBusy(name: string, work: () => Promise<void>): Promise<boolean> {
    this.store.setState((s) => ({ busy: [...s.busy, name] }));
    this.clearError(name);
    try {
      await work();
      return true;
    } catch (error) {
      this.store.setState((s) => ({ errors: { ...s.errors, [name]: errorMessage(error) } }));
      return false;
    } finally {
      this.store.setState((s) => {
        const busy = [...s.busy];
        busy.splice(busy.indexOf(name), 1);
        return { busy };
      });
    }
  }
}
