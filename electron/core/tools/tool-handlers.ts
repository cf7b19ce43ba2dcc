/** tools.* and mcp.*: the catalog of every tool, and the MCP servers behind it. */
import type { DomainHandlers } from "../handlers";
import type { McpHub } from "./mcp/mcp-hub";
import type { ToolCatalog } from "./tool-catalog";

export function toolHandlers(
  catalog: ToolCatalog,
  hub: McpHub,
): DomainHandlers<"tools"> & DomainHandlers<"mcp"> {
  return {
    "tools.list": () => catalog.list(),
    "tools.setEnabled": ({ server, name, enabled }) => catalog.setEnabled(server, name, enabled),
    "mcp.list": () => hub.list(),
    "mcp.add": ({ name, spec }) => hub.add(name, spec),
    "mcp.import": ({ json }) => hub.import(json),
    "mcp.remove": ({ name }) => hub.remove(name),
    "mcp.restart": ({ name }) => hub.restart(name),
    "mcp.logs": ({ name }) => ({ lines: hub.logs(name) }),
  };
}
