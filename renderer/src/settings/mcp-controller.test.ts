import { describe, expect, it } from "vitest";
import { ApiError } from "../../../electron/api";
import type { McpServerStatus, ToolInfo } from "../../../electron/api";
import { McpController } from "./mcp-controller";
import { ScriptedApi } from "../testing/scripted-api";

function tool(server: string, name: string, enabled = true): ToolInfo {
  return { server, name, description: `${name} tool`, inputSchema: { type: "object" }, enabled };
}

function server(name: string, over: Partial<McpServerStatus> = {}): McpServerStatus {
  return {
    name,
    transport: "stdio",
    target: `node ${name}.js`,
    envKeys: [],
    state: "ready",
    error: null,
    tools: [tool(name, "set_timer")],
    logLines: 1,
    ...over,
  };
}

function setup() {
  let servers = [server("fixture")];
  const builtins = [tool("builtin", "search_conversations"), tool("builtin", "remember", false)];
  const logs: Record<string, string[]> = { fixture: ["started"] };
  const api = new ScriptedApi({
    "mcp.list": () => servers,
    "tools.list": () => [...builtins, ...servers.flatMap((s) => s.tools)],
    "mcp.add": ({ name, spec }) => {
      if (servers.some((s) => s.name === name))
        throw new ApiError("invalid_input", `A server named ${name} exists.`);
      const added = server(name, {
        state: "starting",
        tools: [],
        target: "command" in spec ? spec.command : spec.url,
      });
      servers = [...servers, added];
      return added;
    },
    "mcp.import": ({ json }) => {
      const parsed = JSON.parse(json) as { mcpServers: Record<string, unknown> };
      const names = Object.keys(parsed.mcpServers);
      const added = names.filter((n) => n !== "broken").map((n) => server(n, { state: "starting" }));
      servers = [...servers, ...added];
      return {
        added,
        errors: names.includes("broken") ? [{ name: "broken", message: "no command or url" }] : [],
      };
    },
    "mcp.remove": ({ name }) => {
      servers = servers.filter((s) => s.name !== name);
      return { removed: true };
    },
    "mcp.restart": ({ name }) => server(name, { state: "starting" }),
    "mcp.logs": ({ name }) => ({ lines: logs[name] ?? [] }),
    "tools.setEnabled": ({ server: s, name, enabled }) => {
      if (name === "locked") throw new ApiError("invalid_input", "No tool named locked.");
      return tool(s, name, enabled);
    },
  });
  return { api, controller: new McpController(api), logs };
}

describe("McpController", () => {
  it("lists servers and the built-in tools, adds, restarts and removes", async () => {
    const { api, controller } = setup();
    await controller.load();
    const state = () => controller.store.getState();
    expect(state().servers?.map((s) => s.name)).toEqual(["fixture"]);
    expect(state().builtins?.map((t) => t.name)).toEqual(["search_conversations", "remember"]);

    expect(await controller.add("second", { type: "stdio", command: "node", args: [], env: {} })).toBe(true);
    expect(state().servers?.map((s) => `${s.name}:${s.state}`)).toEqual(["fixture:ready", "second:starting"]);
    expect(await controller.add("second", { type: "stdio", command: "node", args: [], env: {} })).toBe(false);
    expect(state().addError).toBe("A server named second exists.");
    expect(state().adding).toBe(false);

    expect(await controller.restart("fixture")).toBe(true);
    expect(state().servers?.[0]?.state).toBe("starting");
    expect(await controller.remove("second")).toBe(true);
    expect(api.inputs("mcp.remove")).toEqual([{ name: "second" }]);
    expect(state().servers?.map((s) => s.name)).toEqual(["fixture"]);
    expect(state().busy).toEqual([]);
  });

  it("follows mcp.changed once listed, and refreshes open logs when lines were added", async () => {
    const { api, controller, logs } = setup();
    api.emit("mcp.changed", { name: "early", server: server("early") });
    expect(controller.store.getState().servers).toBeNull();
    await controller.load();

    expect(await controller.loadLogs("fixture")).toBe(true);
    expect(controller.store.getState().logs.fixture).toEqual(["started"]);
    logs.fixture = ["started", "crashed: exit 1"];
    api.emit("mcp.changed", {
      name: "fixture",
      server: server("fixture", { state: "crashed", error: "exit 1", logLines: 2 }),
    });
    expect(controller.store.getState().servers?.[0]).toMatchObject({ state: "crashed", error: "exit 1" });
    await expect.poll(() => controller.store.getState().logs.fixture).toEqual(["started", "crashed: exit 1"]);

    api.emit("mcp.changed", { name: "fixture", server: null });
    expect(controller.store.getState().servers).toEqual([]);
    expect(controller.store.getState().logs.fixture).toBeUndefined();
  });

  it("imports each server on its own and reports the ones refused", async () => {
    const { api, controller } = setup();
    await controller.load();
    expect(await controller.importJson("   ")).toBeNull();
    expect(api.inputs("mcp.import")).toEqual([]);
    expect(controller.store.getState().importError).toMatch(/Paste an mcpServers JSON/);

    const json = JSON.stringify({
      mcpServers: { a: { command: "x" }, broken: {}, b: { url: "http://h/mcp" } },
    });
    expect(await controller.importJson(json)).toEqual({
      added: ["a", "b"],
      errors: [{ name: "broken", message: "no command or url" }],
    });
    expect(controller.store.getState().servers?.map((s) => s.name)).toEqual(["fixture", "a", "b"]);
    expect(controller.store.getState().importError).toBeNull();
  });

  it("switches a tool at once and puts it back when core refuses", async () => {
    const { api, controller } = setup();
    await controller.load();
    const pending = controller.setToolEnabled("fixture", "set_timer", false);
    expect(controller.store.getState().servers?.[0]?.tools[0]?.enabled).toBe(false);
    expect(await pending).toBe(true);
    expect(api.inputs("tools.setEnabled")).toEqual([
      { server: "fixture", name: "set_timer", enabled: false },
    ]);

    expect(await controller.setToolEnabled("builtin", "remember", true)).toBe(true);
    expect(controller.store.getState().builtins?.find((t) => t.name === "remember")?.enabled).toBe(true);

    controller.store.setState((s) => ({ builtins: [...(s.builtins ?? []), tool("builtin", "locked")] }));
    expect(await controller.setToolEnabled("builtin", "locked", false)).toBe(false);
    expect(controller.store.getState().builtins?.find((t) => t.name === "locked")?.enabled).toBe(true);
    expect(controller.store.getState().errors.builtin).toBe("No tool named locked.");
    controller.dispose();
  });

  it("shows why the list could not be read", async () => {
    const api = new ScriptedApi({});
    const controller = new McpController(api);
    await controller.load();
    expect(controller.store.getState().loadError).toBe("No handler for mcp.list");
  });
});
