import { expect, type Locator, type Page } from "@playwright/test";

/** What the "Add server" form takes for a command server (stdio). */
export interface StdioServerInput {
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
}

/**
 * The Agent's tools as a user sees them: "Tools & MCP servers" in Settings, and the tool calls
 * in an answer with their permission prompt. Roles and accessible names only.
 */
export class ToolsPage {
  readonly settings: Locator;
  readonly section: Locator;
  readonly servers: Locator;

  constructor(readonly page: Page) {
    this.settings = page.getByRole("dialog", { name: "Settings" });
    this.section = this.settings.getByRole("region", { name: "Tools & MCP servers" });
    this.servers = this.section.getByRole("list", { name: "MCP servers" });
  }

  async openSettings(): Promise<void> {
    await this.page.getByRole("button", { name: "Settings", exact: true }).click();
    await expect(this.section.getByRole("heading", { name: "Tools & MCP servers" })).toBeVisible();
  }

  async closeSettings(): Promise<void> {
    await this.settings.getByRole("button", { name: "Close", exact: true }).click();
    await expect(this.settings).toBeHidden();
  }

  /** A server's card, by its name. */
  server(name: string): Locator {
    return this.servers.getByRole("article", { name, exact: true });
  }

  /** A tool's on/off switch in a server's card. */
  toolSwitch(server: string, tool: string): Locator {
    return this.server(server).getByRole("checkbox", { name: tool, exact: true });
  }

  async addStdioServer(input: StdioServerInput): Promise<void> {
    const form = this.section.getByRole("form", { name: "Add an MCP server" });
    if (!(await form.isVisible()))
      await this.section.getByText("Add server", { exact: true }).first().click();
    await form.getByRole("textbox", { name: "Server name" }).fill(input.name);
    await form.getByRole("radio", { name: /A command on this computer/ }).check();
    await form.getByRole("textbox", { name: "Command" }).fill(input.command);
    await form.getByRole("textbox", { name: "Arguments, one per line" }).fill(input.args.join("\n"));
    const env = Object.entries(input.env ?? {}).map(([k, v]) => `${k}=${v}`);
    await form.getByRole("textbox", { name: "Environment, KEY=VALUE per line" }).fill(env.join("\n"));
    if (input.cwd) await form.getByRole("textbox", { name: "Working folder (optional)" }).fill(input.cwd);
    await form.getByRole("button", { name: "Add server" }).click();
  }

  async addHttpServer(input: { name: string; url: string; headers?: Record<string, string> }): Promise<void> {
    const form = this.section.getByRole("form", { name: "Add an MCP server" });
    if (!(await form.isVisible()))
      await this.section.getByText("Add server", { exact: true }).first().click();
    await form.getByRole("textbox", { name: "Server name" }).fill(input.name);
    await form.getByRole("radio", { name: /A URL/ }).check();
    await form.getByRole("textbox", { name: "URL" }).fill(input.url);
    const headers = Object.entries(input.headers ?? {}).map(([k, v]) => `${k}: ${v}`);
    await form.getByRole("textbox", { name: "Headers, Name: value per line" }).fill(headers.join("\n"));
    await form.getByRole("button", { name: "Add server" }).click();
  }

  async importJson(json: string): Promise<void> {
    const form = this.section.getByRole("form", { name: "Import MCP servers" });
    if (!(await form.isVisible()))
      await this.section.getByText("Import mcpServers JSON", { exact: true }).click();
    await form.getByRole("textbox", { name: "mcpServers JSON" }).fill(json);
    await form.getByRole("button", { name: "Import", exact: true }).click();
  }

  async removeServer(name: string): Promise<void> {
    const card = this.server(name);
    await card.getByRole("button", { name: `Remove ${name}` }).click();
    await card.getByRole("button", { name: `Yes, remove ${name}` }).click();
    await expect(card).toHaveCount(0);
  }

  /** The tool calls of an answer, in order. */
  steps(answer: Locator): Locator {
    return answer.getByRole("list", { name: "Tool calls" }).getByRole("group", { name: /^Tool call / });
  }

  /** A call of `tool` in an answer (its card). */
  step(answer: Locator, tool: string): Locator {
    return answer.getByRole("group", { name: new RegExp(`^Tool call ${tool} \\(`) });
  }

  /** The permission question of a call waiting for the user. */
  prompt(step: Locator): Locator {
    return step.getByRole("group", { name: /^Allow .* to run with these arguments\?$/ });
  }

  arguments(step: Locator): Locator {
    return step.getByLabel("Arguments", { exact: true });
  }

  result(step: Locator): Locator {
    return step.getByLabel("Result", { exact: true });
  }

  async decide(step: Locator, label: "Allow once" | "Always allow" | "Deny"): Promise<void> {
    await this.prompt(step).getByRole("button", { name: label, exact: true }).click();
  }
}
