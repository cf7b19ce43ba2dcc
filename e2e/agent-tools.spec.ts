/**
 * The Agent's tools in Chromium against the headless server: a real MCP server (the fixture,
 * over stdio) added through Settings, the demo's trained Agent adapter calling its set_timer
 * tool, the permission prompt answered with Allow once, Deny and Stop, and the trajectory kept
 * across a reload. The fixture's calls file is the proof of what reached the server.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { expect, test, type Page } from "@playwright/test";
import { AdaptersPage } from "./pages/adapters-page";
import { ChatPage } from "./pages/chat-page";
import { ToolsPage } from "./pages/tools-page";
import { ServerProcess } from "./server";

const root = resolve(import.meta.dirname, "..");
const FIXTURE = join(root, "testing/mcp/mcp-fixture-server.ts");
/** A routing example of the demo's Agent adapter, trained to answer it with a set_timer call. */
const TIMER_REQUEST = "Call a tool and set a timer for 15 minutes.";

let server: ServerProcess | undefined;
let scratch: string | undefined;
let httpFixture: ChildProcess | undefined;

test.beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), "macaron-tools-"));
});

test.afterEach(async () => {
  await server?.stop();
  server = undefined;
  httpFixture?.kill("SIGTERM");
  httpFixture = undefined;
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

/** The calls the fixture received, in order (it appends one JSON line per call before running it). */
function fixtureCalls(file: string): Array<{ tool: string; arguments?: unknown; cancelled?: boolean }> {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { tool: string; arguments?: unknown });
}

/**
 * When the next permission prompt appears in the page (epoch ms), seen by a MutationObserver so
 * that the time is the DOM's, not the test's polling.
 */
function promptShownAt(page: Page): Promise<number> {
  // A page-side script as text: this project's e2e code is type-checked without the DOM's types.
  return page.evaluate<number>(`new Promise((resolve) => {
    const observer = new MutationObserver(() => {
      if (!document.querySelector(".tool-step__prompt")) return;
      observer.disconnect();
      resolve(performance.timeOrigin + performance.now());
    });
    observer.observe(document.body, { subtree: true, childList: true });
  })`);
}

/** The fixture as a user adds it: node with tsx, started from the repository. */
function fixtureServer(callsFile: string) {
  return {
    name: "fixture",
    command: process.execPath,
    args: ["--import", "tsx", FIXTURE, "--calls-file", callsFile],
    cwd: root,
  };
}

test("add an MCP server in Settings, allow, deny and stop the Agent's tool calls, see them after a reload", async ({
  page,
}) => {
  test.setTimeout(180_000);
  const callsFile = join(scratch!, "calls.jsonl");
  // Greedy answers: the trained Agent calls set_timer for this request every time.
  server = await ServerProcess.start({ extraArgs: ["--temperature", "0"] });
  const chat = new ChatPage(page);
  const tools = new ToolsPage(page);
  const adapters = new AdaptersPage(page);
  await chat.open(await server.loginUrl());
  await chat.useDemoModel();

  // Settings: nothing is configured, so nothing runs; then the fixture is added by hand.
  await tools.openSettings();
  await expect(tools.section.getByText(/No MCP servers yet/)).toBeVisible();
  await expect(tools.section.getByRole("group", { name: "Built-in tools" })).toBeVisible();
  await tools.addStdioServer(fixtureServer(callsFile));
  const card = tools.server("fixture");
  await expect(card.getByText("Ready", { exact: true })).toBeVisible({ timeout: 30_000 });
  await expect(card).toContainText("mcp-fixture-server.ts");
  await expect(tools.toolSwitch("fixture", "set_timer")).toBeChecked();
  await expect(tools.toolSwitch("fixture", "echo")).toBeChecked();
  // Its logs are one click away.
  await card.getByRole("button", { name: /^Show logs/ }).click();
  await expect(card.getByLabel("Logs of fixture")).toBeVisible();
  await tools.closeSettings();
  expect(fixtureCalls(callsFile)).toEqual([]);

  /**
   * Ask in a new chat pinned to the Agent; resolves with the answer, its set_timer step, and the
   * time from the step's creation in core (the model's call, checked) to its prompt on screen.
   */
  const ask = async () => {
    await chat.newChat.click();
    await adapters.choose("Agent");
    const shown = promptShownAt(page);
    await chat.sendMessage(TIMER_REQUEST);
    const answer = chat.assistantMessages().last();
    const step = tools.step(answer, "set_timer");
    await expect(tools.prompt(step)).toBeVisible({ timeout: 60_000 });
    const url = page.url();
    const id = decodeURIComponent(url.split("#/c/")[1]!);
    const detail = await server!.call<{ messages: Array<{ steps: Array<{ createdAt: number }> }> }>(
      "conversations.get",
      { id },
    );
    const promptMs = (await shown) - detail.messages[1]!.steps[0]!.createdAt;
    return { answer, step, url, promptMs };
  };

  // 1. Allow once: the prompt names the tool, its server and the arguments, and has focus.
  const allowed = await ask();
  const prompt = tools.prompt(allowed.step);
  await expect(allowed.step).toHaveAccessibleName("Tool call set_timer (fixture)");
  await expect(tools.arguments(allowed.step)).toContainText('"minutes": 15');
  await expect(prompt).toBeFocused();
  // Nothing ran while it asked.
  expect(fixtureCalls(callsFile)).toEqual([]);
  // Keyboard: Tab reaches Allow once from the focused prompt.
  await page.keyboard.press("Tab");
  await expect(prompt.getByRole("button", { name: "Allow once" })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(tools.result(allowed.step)).toHaveText("Timer set for 15 minutes.", { timeout: 30_000 });
  await expect(allowed.step.getByText("Done", { exact: true })).toBeVisible();
  await expect(allowed.step.getByText("Allowed once")).toBeVisible();
  await expect(chat.send).toBeVisible({ timeout: 60_000 });
  expect(fixtureCalls(callsFile)).toEqual([{ tool: "set_timer", arguments: { minutes: 15 } }]);

  // 2. Deny: the server never sees the call.
  const denied = await ask();
  expect(denied.url).not.toBe(allowed.url);
  await tools.decide(denied.step, "Deny");
  await expect(denied.step.getByText("Denied", { exact: true })).toBeVisible();
  await expect(denied.step.getByText("Not called: you denied it.")).toBeVisible();
  await expect(chat.send).toBeVisible({ timeout: 60_000 });
  expect(fixtureCalls(callsFile)).toHaveLength(1);

  // 3. Stop while the prompt waits: the answer ends at once and nothing is called.
  const stopped = await ask();
  // The sidebar marks the conversation that waits for the user.
  const waiting = chat.conversations.getByRole("link", {
    name: /^A tool call is waiting for your permission: /,
  });
  await expect(waiting).toHaveCount(1);
  await chat.stop.click();
  await expect(stopped.step.getByText("Stopped", { exact: true })).toBeVisible();
  await expect(tools.prompt(stopped.step)).toHaveCount(0);
  await expect(waiting).toHaveCount(0);
  await expect(chat.send).toBeVisible();
  expect(fixtureCalls(callsFile)).toHaveLength(1);

  // The trajectory is stored with the answers: after a reload each shows its step as it ended.
  const reopen = async (url: string) => {
    await page.goto(url);
    await page.reload();
    await chat.waitLoaded();
    await expect(chat.assistantMessages()).toHaveCount(1);
    return tools.step(chat.assistantMessages().last(), "set_timer");
  };
  const first = await reopen(allowed.url);
  await expect(tools.result(first)).toHaveText("Timer set for 15 minutes.");
  await expect(first.getByText("Allowed once")).toBeVisible();
  await expect(tools.arguments(first)).toContainText('"minutes": 15');
  await expect((await reopen(denied.url)).getByText("Denied", { exact: true })).toBeVisible();
  await expect((await reopen(stopped.url)).getByText("Stopped", { exact: true })).toBeVisible();
  await expect(page.getByRole("button", { name: "Allow once" })).toHaveCount(0);
  expect(fixtureCalls(callsFile)).toHaveLength(1);

  const promptMs = [allowed, denied, stopped].map((a) => Math.round(a.promptMs));
  test
    .info()
    .annotations.push({ type: "tool call to permission prompt (ms)", description: promptMs.join(", ") });
  console.log(`tool call to permission prompt: ${promptMs.join(", ")} ms`);
});

test("import an mcpServers file: each bad entry is reported, the good one is added, then removed", async ({
  page,
}) => {
  const callsFile = join(scratch!, "calls.jsonl");
  server = await ServerProcess.start();
  const chat = new ChatPage(page);
  const tools = new ToolsPage(page);
  await chat.open(await server.loginUrl());
  await tools.openSettings();

  // A file that does not parse: a clear error, nothing added.
  await tools.importJson("{ mcpServers: ");
  await expect(
    tools.section.getByRole("form", { name: "Import MCP servers" }).getByRole("alert"),
  ).toBeVisible();
  await expect(tools.section.getByText(/No MCP servers yet/)).toBeVisible();

  const { name, ...spec } = fixtureServer(callsFile);
  await tools.importJson(
    JSON.stringify({
      mcpServers: { [name]: spec, broken: { args: ["no command or url"] }, "bad name!": spec },
    }),
  );
  const outcome = tools.section.getByRole("status").filter({ hasText: "Added" });
  await expect(outcome).toContainText("Added fixture.");
  const refused = tools.section.getByRole("list", { name: "Servers not added" });
  await expect(refused.getByRole("listitem")).toHaveCount(2);
  await expect(refused).toContainText("broken");
  await expect(refused).toContainText("bad name!");
  await expect(tools.server("fixture").getByText("Ready", { exact: true })).toBeVisible({ timeout: 30_000 });

  // A tool switched off stays off after Settings is opened again.
  await tools.toolSwitch("fixture", "echo").uncheck();
  await tools.closeSettings();
  await tools.openSettings();
  await expect(tools.toolSwitch("fixture", "echo")).not.toBeChecked();
  await expect(tools.toolSwitch("fixture", "set_timer")).toBeChecked();

  // A file chosen from disk; the server gets its env, whose values are never shown.
  const file = join(scratch!, "mcp.json");
  writeFileSync(
    file,
    JSON.stringify({ mcpServers: { second: { ...spec, env: { FIXTURE_TOKEN: "s3cret-value" } } } }),
  );
  await tools.section.getByLabel("Import MCP servers from a file").setInputFiles(file);
  const second = tools.server("second");
  await expect(second.getByText("Ready", { exact: true })).toBeVisible({ timeout: 30_000 });
  await expect(second).toContainText("Environment: FIXTURE_TOKEN");
  await expect(tools.section).not.toContainText("s3cret-value");

  // Restart: the open logs follow the server's new start.
  await second.getByRole("button", { name: /^Show logs/ }).click();
  const logs = second.getByLabel("Logs of second");
  await expect(logs).toContainText("ready on stdio");
  const started = (await logs.textContent())!.split("ready on stdio").length;
  await second.getByRole("button", { name: "Restart" }).click();
  await expect(async () => {
    expect((await logs.textContent())!.split("ready on stdio").length).toBeGreaterThan(started);
  }).toPass({ timeout: 30_000 });
  await expect(second.getByText("Ready", { exact: true })).toBeVisible();
  await tools.removeServer("second");

  // The form explains a bad line before asking core.
  await tools.addStdioServer({ name: "other", command: "node", args: [], env: { "1BAD": "x" } });
  await expect(tools.section.getByRole("alert").filter({ hasText: "Environment, line 1" })).toBeVisible();

  await tools.removeServer("fixture");
  await expect(tools.section.getByText(/No MCP servers yet/)).toBeVisible();
  expect(fixtureCalls(callsFile)).toEqual([]);
});

/** The fixture over Streamable HTTP on a free port; resolves with its URL once it accepts connections. */
function startHttpFixture(): Promise<string> {
  const proc = spawn(process.execPath, ["--import", "tsx", FIXTURE, "--http", "0"], {
    cwd: root,
    stdio: ["ignore", "ignore", "pipe"],
  });
  httpFixture = proc;
  return new Promise((resolveUrl, reject) => {
    createInterface({ input: proc.stderr }).on("line", (line) => {
      const m = /^mcp fixture listening on (\S+)/.exec(line);
      if (m) resolveUrl(m[1]!);
    });
    proc.once("exit", (code) => reject(new Error(`the HTTP fixture exited with ${code}`)));
  });
}

test("add a Streamable HTTP server by URL, with a header", async ({ page }) => {
  const url = await startHttpFixture();
  server = await ServerProcess.start();
  const chat = new ChatPage(page);
  const tools = new ToolsPage(page);
  await chat.open(await server.loginUrl());
  await tools.openSettings();

  await tools.addHttpServer({ name: "remote", url, headers: { "X-Fixture": "hello" } });
  const card = tools.server("remote");
  await expect(card.getByText("Ready", { exact: true })).toBeVisible({ timeout: 30_000 });
  await expect(card).toContainText("Streamable HTTP");
  await expect(card).toContainText(url);
  await expect(tools.toolSwitch("remote", "header")).toBeChecked();
  // A second server under the same name is refused with core's reason; the first one stays.
  await tools.addHttpServer({ name: "remote", url });
  await expect(
    tools.section.getByRole("form", { name: "Add an MCP server" }).getByRole("alert"),
  ).toBeVisible();
  await expect(tools.servers.getByRole("article")).toHaveCount(1);
});
