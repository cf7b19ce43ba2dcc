/**
 * The MCP servers the user added: saved in <dataDir>/mcp.json (the `mcpServers` format), each
 * started only once added (or given by the headless `--mcp-config` for that run), with its
 * state, tools, log and restart; the tools of the ready ones are a ToolSource for the catalog.
 * Every change of a server is an `mcp.changed` event.
 */
import { rename } from "node:fs/promises";
import { join } from "node:path";
import { ApiError, type EventPayload } from "../../../api";
import type { McpServerSpec, McpServerStatus } from "../../../api/tools";
import type { Log } from "../../dispatch";
import type { ListedTool, ListingToolSource } from "../tool-catalog";
import type { ToolSwitches } from "../tool-switches";
import { BUILTIN_SERVER, type CallableTool, type ToolOutcome } from "../tool-types";
import { McpConnection, targetOf } from "./mcp-connection";
import {
  isStdio,
  loadSavedConfig,
  MCP_CONFIG_FILE,
  type NamedSpec,
  parseMcpConfig,
  saveConfig,
} from "./mcp-config";

/** How long mcp.add, mcp.import and mcp.restart wait for a server before answering "starting". */
export const MCP_START_WAIT_MS = 20_000;

export interface McpHubOptions {
  dataDir: string;
  switches: ToolSwitches;
  emit: (payload: EventPayload<"mcp.changed">) => void;
  log: Log;
  /** Servers for this run only (headless `--mcp-config`): started with the saved ones, never saved. */
  sessionServers?: NamedSpec[];
  connectTimeoutMs?: number;
  /** Per tool call (default TOOL_CALL_TIMEOUT_MS); tests shorten it. */
  callTimeoutMs?: number;
  startWaitMs?: number;
  clientVersion?: string;
}

interface Entry {
  connection: McpConnection;
  /** The last start (or restart) under way or done. */
  starting: Promise<void>;
}

export class McpHub implements ListingToolSource {
  private readonly entries = new Map<string, Entry>();
  /** What mcp.json holds (session servers are not in it). */
  private readonly saved = new Map<string, McpServerSpec>();
  private saving: Promise<void> = Promise.resolve();
  /** mcp.json existed but could not be used: it is moved aside before the first save. */
  private unreadableConfig = false;
  private closed = false;
  private readonly unsubscribe: () => void;

  constructor(private readonly options: McpHubOptions) {
    this.unsubscribe = options.switches.onChange((server) => {
      if (this.entries.has(server)) this.changed(server);
    });
  }

  /** Start the saved servers and the session's (in the background: none blocks start-up). */
  start(): void {
    const config = loadSavedConfig(this.options.dataDir, this.options.log);
    this.unreadableConfig = config.errors.some((e) => e.name === MCP_CONFIG_FILE);
    for (const error of config.errors)
      if (error.name !== MCP_CONFIG_FILE)
        this.options.log(`${MCP_CONFIG_FILE}: server "${error.name}" is skipped: ${error.message}`, null);
    for (const { name, spec } of config.servers) this.saved.set(name, spec);
    const running = new Map(config.servers.map(({ name, spec }) => [name, spec]));
    // The command line wins over a saved server of the same name, for this run.
    for (const { name, spec } of this.options.sessionServers ?? []) running.set(name, spec);
    for (const [name, spec] of running) this.launch(name, spec);
  }

  list(): McpServerStatus[] {
    return [...this.entries.keys()].map((name) => this.status(name));
  }

  status(name: string): McpServerStatus {
    const connection = this.entry(name).connection;
    const spec = connection.spec;
    return {
      name,
      transport: isStdio(spec) ? "stdio" : "http",
      target: targetOf(spec),
      envKeys: isStdio(spec) ? Object.keys(spec.env).sort() : [],
      state: connection.state,
      error: connection.error,
      tools: this.toolsOf(connection).map(({ server, name: tool, description, inputSchema, enabled }) => ({
        server,
        name: tool,
        description,
        inputSchema,
        enabled,
      })),
      logLines: connection.log.size,
    };
  }

  /** Save a new server and start it; answers once it is ready, failed, or still starting after a while. */
  async add(name: string, spec: McpServerSpec): Promise<McpServerStatus> {
    this.refuseName(name);
    await this.save(() => this.saved.set(name, spec));
    const entry = this.launch(name, spec);
    await this.waitFor(entry);
    return this.status(name);
  }

  /** Add each usable server of an `mcpServers` document; bad or existing names are reported, not added. */
  async import(
    json: string,
  ): Promise<{ added: McpServerStatus[]; errors: { name: string; message: string }[] }> {
    let parsed;
    try {
      parsed = parseMcpConfig(json);
    } catch (err) {
      throw new ApiError("invalid_input", (err as Error).message);
    }
    const errors = [...parsed.errors];
    const fresh: NamedSpec[] = [];
    for (const server of parsed.servers) {
      try {
        this.refuseName(server.name);
        fresh.push(server);
      } catch (err) {
        errors.push({ name: server.name, message: (err as Error).message });
      }
    }
    if (fresh.length > 0)
      await this.save(() => fresh.forEach(({ name, spec }) => this.saved.set(name, spec)));
    const entries = fresh.map(({ name, spec }) => this.launch(name, spec));
    await Promise.all(entries.map((entry) => this.waitFor(entry)));
    return { added: fresh.map(({ name }) => this.status(name)), errors };
  }

  /** Stop a server and forget it (its saved entry and its tool switches). */
  async remove(name: string): Promise<{ removed: boolean }> {
    const entry = this.entries.get(name);
    if (!entry) return { removed: false };
    this.entries.delete(name);
    if (this.saved.has(name)) await this.save(() => this.saved.delete(name));
    this.options.switches.forget(name);
    await entry.connection.stop();
    this.options.emit({ name, server: null });
    return { removed: true };
  }

  async restart(name: string): Promise<McpServerStatus> {
    const entry = this.entry(name);
    entry.starting = entry.connection.start();
    await this.waitFor(entry);
    return this.status(name);
  }

  logs(name: string): string[] {
    return this.entry(name).connection.log.all();
  }

  /** Every tool of every server, usable or not (the catalog lists them). */
  listTools(): ListedTool[] {
    return [...this.entries.values()].flatMap(({ connection }) => this.toolsOf(connection));
  }

  /** The tools the Agent can call now: of ready servers, turned on, with a usable schema. */
  tools(): CallableTool[] {
    return this.listTools()
      .filter((tool) => tool.enabled)
      .map(({ server, name, description, inputSchema }) => ({ server, name, description, inputSchema }));
  }

  async call(tool: CallableTool, args: unknown, signal: AbortSignal): Promise<ToolOutcome> {
    const connection = this.entries.get(tool.server)?.connection;
    if (!connection) return { ok: false, error: `There is no MCP server named "${tool.server}".` };
    const listed = connection.tools.find((t) => t.name === tool.name);
    if (connection.state === "ready" && !listed)
      return { ok: false, error: `The server "${tool.server}" has no tool "${tool.name}".` };
    if (listed?.problem)
      return { ok: false, error: `The tool "${tool.name}" cannot be called: ${listed.problem}` };
    if (listed && !this.options.switches.isEnabled(tool.server, tool.name))
      return { ok: false, error: `The tool "${tool.name}" is turned off.` };
    return connection.call(tool.name, args, signal, this.options.callTimeoutMs);
  }

  /** Stop every server (core closes). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    const connections = [...this.entries.values()].map((entry) => entry.connection);
    this.entries.clear();
    await Promise.all(connections.map((connection) => connection.stop()));
    // What remove() and the switches still write must be on disk before core closes.
    await this.saving;
    await this.options.switches.saved();
  }

  private toolsOf(connection: McpConnection): ListedTool[] {
    return connection.tools.map((tool) => ({
      server: connection.name,
      name: tool.name,
      description: tool.problem
        ? `Cannot be used: ${tool.problem} ${tool.description}`.trim()
        : tool.description,
      inputSchema: tool.inputSchema,
      enabled: tool.problem === null && this.options.switches.isEnabled(connection.name, tool.name),
      problem: tool.problem,
    }));
  }

  private entry(name: string): Entry {
    const entry = this.entries.get(name);
    if (!entry) throw new ApiError("not_found", `There is no MCP server named "${name}".`);
    return entry;
  }

  private refuseName(name: string): void {
    if (name === BUILTIN_SERVER)
      throw new ApiError("invalid_input", `"${BUILTIN_SERVER}" is the app's own tools; pick another name.`);
    if (this.entries.has(name) || this.saved.has(name))
      throw new ApiError(
        "invalid_input",
        `A server named "${name}" exists already (remove it first to replace it).`,
      );
    if (this.closed) throw new ApiError("busy", "The app is shutting down.");
  }

  private launch(name: string, spec: McpServerSpec): Entry {
    const connection = new McpConnection({
      name,
      spec,
      onChange: () => {
        if (this.entries.get(name)?.connection === connection) this.changed(name);
      },
      connectTimeoutMs: this.options.connectTimeoutMs,
      callTimeoutMs: this.options.callTimeoutMs,
      clientVersion: this.options.clientVersion,
    });
    const entry: Entry = { connection, starting: Promise.resolve() };
    this.entries.set(name, entry);
    entry.starting = connection.start();
    return entry;
  }

  private async waitFor(entry: Entry): Promise<void> {
    const wait = this.options.startWaitMs ?? MCP_START_WAIT_MS;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([entry.starting, new Promise((resolve) => (timer = setTimeout(resolve, wait)))]);
    clearTimeout(timer);
  }

  private changed(name: string): void {
    this.options.emit({ name, server: this.status(name) });
  }

  /** Apply `change` to the saved set and write mcp.json; a failed write undoes the change. */
  private async save(change: () => void): Promise<void> {
    const before = new Map(this.saved);
    change();
    const servers = [...this.saved].map(([name, spec]) => ({ name, spec }));
    const write = this.saving.then(async () => {
      if (this.unreadableConfig) {
        // Keep what the user had: it may be fixable by hand.
        const path = join(this.options.dataDir, MCP_CONFIG_FILE);
        await rename(path, `${path}.unreadable-${Date.now()}`).catch(() => undefined);
        this.options.log(
          `${MCP_CONFIG_FILE} could not be read; it was kept as ${MCP_CONFIG_FILE}.unreadable-*`,
          null,
        );
        this.unreadableConfig = false;
      }
      await saveConfig(this.options.dataDir, servers);
    });
    this.saving = write.catch(() => undefined);
    try {
      await write;
    } catch (err) {
      this.saved.clear();
      for (const [name, spec] of before) this.saved.set(name, spec);
      throw new ApiError("internal", `Could not save the MCP servers: ${(err as Error).message}`);
    }
  }
}
