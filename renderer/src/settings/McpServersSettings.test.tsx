/** "Tools & MCP servers" rendered to HTML from a given store state (React's server renderer). */
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { McpServerStatus, ToolInfo } from "../../../electron/api";
import { ControllerProvider } from "../app/controller-context";
import { AppController } from "../state/app-controller";
import type { McpState } from "./mcp-controller";
import { ScriptedApi } from "../testing/scripted-api";
import { McpServersSettings } from "./McpServersSettings";

const tool = (server: string, name: string, enabled = true): ToolInfo => ({
  server,
  name,
  description: `${name} tool`,
  inputSchema: { type: "object" },
  enabled,
});

function render(state: Partial<McpState>): string {
  const controller = new AppController(new ScriptedApi({}));
  const store = controller.mcp.store;
  store.setState(state);
  // React's server renderer reads a zustand store's initial state: render the given one.
  store.getInitialState = store.getState;
  try {
    return renderToStaticMarkup(
      <ControllerProvider controller={controller}>
        <McpServersSettings />
      </ControllerProvider>,
    );
  } finally {
    controller.dispose();
  }
}

describe("McpServersSettings", () => {
  it("says so when no server was added, and lists the built-in tools", () => {
    const html = render({ servers: [], builtins: [tool("builtin", "remember", false)] });
    expect(html).toContain("No MCP servers yet");
    expect(html).toContain("Built-in tools");
    expect(html).toMatch(/<input type="checkbox"(?![^>]*checked)[^>]*\/><code>remember<\/code>/);
  });

  it("shows each server's state, target, env names without values, error and tools", () => {
    const crashed: McpServerStatus = {
      name: "files",
      transport: "stdio",
      target: "npx -y some-server /home",
      envKeys: ["API_KEY"],
      state: "crashed",
      error: "The server exited (code 3).",
      tools: [tool("files", "read_file"), tool("files", "write_file", false)],
      logLines: 4,
    };
    const html = render({ servers: [crashed], builtins: [], logs: { files: ["<b>stderr</b> line"] } });
    expect(html).toContain(">Crashed</span>");
    expect(html).toContain("npx -y some-server /home");
    expect(html).toContain("Environment: API_KEY");
    expect(html).toMatch(/role="alert">The server exited \(code 3\)\.</);
    expect(html).toMatch(/<input type="checkbox" checked=""[^>]*\/><code>read_file<\/code>/);
    expect(html).toMatch(/<input type="checkbox"(?![^>]*checked)[^>]*\/><code>write_file<\/code>/);
    // Log lines are text too.
    expect(html).toContain("&lt;b&gt;stderr&lt;/b&gt; line");
    expect(html).toContain(">Hide logs</button>");
    expect(html).toContain('aria-label="Remove files"');
  });

  it("shows an import's refused entries next to the added ones", () => {
    const html = render({
      servers: [],
      importOutcome: { added: ["a"], errors: [{ name: "broken", message: "needs a command or a url" }] },
    });
    expect(html).toContain("Added a.");
    expect(html).toMatch(/<strong>broken<\/strong>: needs a command or a url/);
  });

  it("shows why the list could not be read instead of an empty state", () => {
    const html = render({ loadError: "The database is not available." });
    expect(html).toContain("The database is not available.");
    expect(html).not.toContain("No MCP servers yet");
  });
});
