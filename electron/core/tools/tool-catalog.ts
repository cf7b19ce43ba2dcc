/**
 * Every tool the Agent can call, from every source (the MCP hub, the app's built-in tools),
 * behind one ToolSource: tools.list and tools.setEnabled read and write it, the agent loop
 * takes `tools()` and `call()` from it. A call goes to the source that owns the tool, only if
 * the tool is on and usable and the arguments match its schema.
 */
import { ApiError } from "../../api";
import type { ToolInfo } from "../../api/tools";
import { checkArguments, schemaProblem } from "./argument-check";
import type { ToolSwitches } from "./tool-switches";
import type { CallableTool, ToolOutcome, ToolSource } from "./tool-types";

/** A tool as listed: on or off, and why it cannot be used (null when it can). */
export interface ListedTool extends CallableTool {
  enabled: boolean;
  problem: string | null;
}

/**
 * A source that lists its tools itself, turned-off and unusable ones included, and applies the
 * switches itself (the MCP hub: its statuses show them). A plain ToolSource (the built-in
 * tools) gives all its tools from `tools()` and the catalog applies the switches.
 */
export interface ListingToolSource extends ToolSource {
  listTools(): ListedTool[];
}

function isListing(source: ToolSource): source is ListingToolSource {
  return typeof (source as Partial<ListingToolSource>).listTools === "function";
}

function info({ server, name, description, inputSchema, enabled }: ListedTool): ToolInfo {
  return { server, name, description, inputSchema, enabled };
}

export class ToolCatalog implements ToolSource {
  private readonly sources: ToolSource[] = [];

  constructor(
    private readonly switches: ToolSwitches,
    sources: ToolSource[] = [],
  ) {
    for (const source of sources) this.addSource(source);
  }

  /** Add a source (the built-in tools are added where they are made). Built-ins list first. */
  addSource(source: ToolSource): void {
    this.sources.push(source);
  }

  /** Every tool, on or off (tools.list): built-in ones under server "builtin". */
  list(): ToolInfo[] {
    return this.listed()
      .map(({ tool }) => tool)
      .map(info);
  }

  /** Turn one tool on or off (remembered). A tool with an unusable schema cannot be turned on. */
  setEnabled(server: string, name: string, enabled: boolean): ToolInfo {
    const found = this.listed().find(({ tool }) => tool.server === server && tool.name === name);
    if (!found) throw new ApiError("not_found", `There is no tool "${name}" on "${server}".`);
    if (enabled && found.tool.problem)
      throw new ApiError("invalid_input", `The tool "${name}" cannot be turned on: ${found.tool.problem}`);
    this.switches.set(server, name, enabled);
    const after = this.listed().find(({ tool }) => tool.server === server && tool.name === name);
    return info(after?.tool ?? { ...found.tool, enabled });
  }

  /** The tools the Agent may call now: on, usable, their server ready. */
  tools(): CallableTool[] {
    return this.callable().map(({ tool }) => tool);
  }

  /** The callable tool of that server and name, or null. */
  find(server: string, name: string): CallableTool | null {
    return this.callable().find(({ tool }) => tool.server === server && tool.name === name)?.tool ?? null;
  }

  /**
   * Run a tool through its source. Never throws; a tool that is off, gone or unusable, or
   * arguments that do not match its schema, are refused before the source sees anything.
   */
  async call(tool: CallableTool, args: unknown, signal: AbortSignal): Promise<ToolOutcome> {
    const found = this.callable().find(({ tool: t }) => t.server === tool.server && t.name === tool.name);
    if (!found) {
      const listed = this.listed().find(({ tool: t }) => t.server === tool.server && t.name === tool.name);
      const why = !listed
        ? "it is not available (its server is not ready, or it does not exist)"
        : listed.tool.problem
          ? listed.tool.problem
          : "it is turned off";
      return { ok: false, error: `The tool "${tool.name}" cannot be called: ${why}.` };
    }
    const check = checkArguments(found.tool.inputSchema, args);
    if (!check.ok)
      return { ok: false, error: `The arguments do not match the tool's schema: ${check.message}.` };
    try {
      return await found.source.call(found.tool, args, signal);
    } catch (err) {
      return { ok: false, error: `The tool failed: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  private callable(): { tool: CallableTool; source: ToolSource }[] {
    const callable: { tool: CallableTool; source: ToolSource }[] = [];
    for (const source of this.ordered()) {
      if (isListing(source)) {
        for (const tool of source.tools()) callable.push({ tool, source });
        continue;
      }
      for (const tool of source.tools())
        if (this.switches.isEnabled(tool.server, tool.name) && schemaProblem(tool.inputSchema) === null)
          callable.push({ tool, source });
    }
    return callable;
  }

  private listed(): { tool: ListedTool; source: ToolSource }[] {
    return this.ordered().flatMap((source) =>
      isListing(source)
        ? source.listTools().map((tool) => ({ tool, source }))
        : source.tools().map((tool) => {
            const problem = schemaProblem(tool.inputSchema);
            const enabled = problem === null && this.switches.isEnabled(tool.server, tool.name);
            return { tool: { ...tool, enabled, problem }, source };
          }),
    );
  }

  /** Plain sources (the built-in tools) first, so that tools.list shows the app's own tools on top. */
  private ordered(): ToolSource[] {
    return [...this.sources.filter((s) => !isListing(s)), ...this.sources.filter(isListing)];
  }
}
