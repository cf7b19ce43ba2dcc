import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "@playwright/test";
import { ChatPage } from "./pages/chat-page";
import { MemoryPage } from "./pages/memory-page";
import { fixturesDir, ServerProcess } from "./server";

interface MemoryRow {
  text: string;
  conversationId: string | null;
}

let server: ServerProcess | undefined;
const tempDirs: string[] = [];
test.afterEach(async () => {
  await server?.stop();
  server = undefined;
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "macaron-memory-e2e-"));
  tempDirs.push(dir);
  return dir;
}

async function startWithModel(): Promise<ServerProcess> {
  return ServerProcess.start({ model: join(fixturesDir(), "base.gguf") });
}

test("memories: added in the panel, remembered from a message, with their source", async ({ page }) => {
  server = await startWithModel();
  const chat = new ChatPage(page);
  const memory = new MemoryPage(page);
  await chat.open(await server.loginUrl());

  await memory.open();
  await expect(memory.panel.getByRole("switch", { name: "Use memory" })).toBeChecked();
  await memory.add("I live in Lyon");
  await expect(memory.memory("I live in Lyon")).toContainText("You said");

  // Edit it, then close.
  await memory.memory("I live in Lyon").getByRole("button", { name: "Edit" }).click();
  await memory.panel.getByRole("textbox", { name: "Memory text" }).fill("I live in Lyon, France");
  await memory.panel.getByRole("button", { name: "Save", exact: true }).click();
  await expect(memory.memory("I live in Lyon, France")).toBeVisible();
  await memory.close();

  await chat.sendMessage("remember that I prefer metric units");
  await expect(chat.assistantMessages()).toHaveCount(1);
  await expect(chat.send).toBeVisible();
  // The answer says the fact was saved, and leads to it in the Memory panel.
  const note = memory.savedNote(chat.assistantMessages().last());
  await expect(note).toHaveText("Saved to memory: I prefer metric units Open Memory");
  await note.getByRole("button", { name: "Open Memory" }).click();
  await expect(memory.panel.getByRole("heading", { name: "Memory", exact: true })).toBeVisible();
  const remembered = memory.memory("I prefer metric units");
  await expect(remembered).toBeVisible();
  await expect(remembered).toContainText("You said");
  await expect(remembered.getByRole("link", { name: "Open the conversation" })).toBeVisible();

  // The next answer in that chat used memories, and says so.
  await memory.close();
  await chat.sendMessage("How tall is a metric units tower in Lyon?");
  await expect(chat.assistantMessages()).toHaveCount(2);
  await expect(chat.send).toBeVisible();
  const used = chat
    .assistantMessages()
    .last()
    .getByText(/^Used \d+ memor(y|ies)$/);
  await expect(used).toBeVisible();
  await used.click();
  await expect(chat.assistantMessages().last().getByRole("list", { name: "Memories used" })).toBeVisible();

  // Delete one (confirmed).
  await memory.open();
  await memory.memory("I live in Lyon, France").getByRole("button", { name: "Delete" }).click();
  await memory.memory("I live in Lyon, France").getByRole("button", { name: "Yes, delete" }).click();
  await expect(memory.memory("I live in Lyon, France")).toHaveCount(0);
});

test("search finds a word from an earlier conversation, marks it, and opens it", async ({ page }) => {
  server = await startWithModel();
  const chat = new ChatPage(page);
  const memory = new MemoryPage(page);
  await chat.open(await server.loginUrl());
  await chat.sendMessage("The zeppelin flew over Paris at dawn");
  await expect(chat.send).toBeVisible();
  await chat.newChat.click();
  await chat.sendMessage("Something else entirely");
  await expect(chat.assistantMessages()).toHaveCount(1);
  await expect(chat.send).toBeVisible();

  await memory.search.fill("zeppelin");
  // Its title and its first message both match: the conversation is listed once, both marked.
  await expect(memory.searchResults.getByRole("listitem")).toHaveCount(1);
  const hit = memory.searchResults.getByRole("link");
  await expect(hit).toBeVisible();
  await expect(hit.locator("mark")).toHaveText([/zeppelin/i, /zeppelin/i]);
  await hit.click();
  await expect(chat.userMessages()).toHaveText([/The zeppelin flew over Paris at dawn/]);

  // An empty query brings the plain list back.
  await memory.search.fill("");
  await expect(memory.searchResults).toHaveCount(0);
  await expect(chat.conversations.getByRole("link", { name: "Something else entirely" })).toBeVisible();
});

test("export a conversation to a file and import it back", async ({ page }) => {
  server = await startWithModel();
  const chat = new ChatPage(page);
  await chat.open(await server.loginUrl());
  await chat.sendMessage("Export me please");
  await expect(chat.assistantMessages()).toHaveCount(1);
  await expect(chat.send).toBeVisible();

  const item = chat.conversations.getByRole("listitem").filter({ hasText: "Export me please" });
  const downloading = page.waitForEvent("download");
  await item.getByRole("button", { name: "Export" }).click();
  const download = await downloading;
  expect(download.suggestedFilename()).toMatch(/\.json$/);
  const file = join(tempDir(), download.suggestedFilename());
  await download.saveAs(file);
  expect(JSON.parse(readFileSync(file, "utf8"))).toBeTruthy();

  const choosing = page.waitForEvent("filechooser");
  await chat.conversations.getByRole("button", { name: "Import…" }).click();
  await (await choosing).setFiles(file);
  await expect(page.getByText(/Imported 1 conversation, 2 messages/)).toBeVisible();
  await expect(chat.conversations.getByRole("link", { name: "Export me please" })).toHaveCount(2);

  // A file that is not an export is refused with the reason, and nothing is added.
  const bad = join(tempDir(), "not-an-export.json");
  writeFileSync(bad, JSON.stringify({ hello: "world" }));
  const choosingBad = page.waitForEvent("filechooser");
  await chat.conversations.getByRole("button", { name: "Import…" }).click();
  await (await choosingBad).setFiles(bad);
  await expect(page.getByText(/^Import failed: /)).toBeVisible();
  await expect(chat.conversations.getByRole("link", { name: "Export me please" })).toHaveCount(2);

  // "Export all" downloads everything.
  const all = page.waitForEvent("download");
  await chat.conversations.getByRole("button", { name: "Export all" }).click();
  expect((await all).suggestedFilename()).toMatch(/\.json$/);
});

test("deleting a conversation can delete the memories that came from it", async ({ page }) => {
  server = await startWithModel();
  const chat = new ChatPage(page);
  await chat.open(await server.loginUrl());
  await chat.sendMessage("remember that my cat is called Miso");
  await expect(chat.assistantMessages()).toHaveCount(1);
  await expect(chat.send).toBeVisible();
  await expect
    .poll(async () => (await server!.call<MemoryRow[]>("memories.list")).map((m) => m.text))
    .toContain("my cat is called Miso");

  const item = chat.conversations.getByRole("listitem").filter({ hasText: "remember that my cat" });
  await item.getByRole("button", { name: "Delete" }).click();
  await page.getByRole("checkbox", { name: "Also delete memories from this conversation" }).check();
  await expect(page.getByRole("button", { name: "Undo" })).toBeHidden({ timeout: 20_000 });
  await expect(chat.conversations.getByText("remember that my cat")).toHaveCount(0);
  await expect
    .poll(async () => (await server!.call<MemoryRow[]>("memories.list")).map((m) => m.text))
    .not.toContain("my cat is called Miso");
  expect(await server.call<unknown[]>("conversations.list", {})).toHaveLength(0);
});

test("a damaged database shows the recovery screen, and Start fresh recovers", async ({ page }) => {
  const dataDir = tempDir();
  writeFileSync(join(dataDir, "macaron.db"), "this is not a SQLite database, just garbage ".repeat(200));
  server = await ServerProcess.start({ dataDir, model: join(fixturesDir(), "base.gguf") });
  const chat = new ChatPage(page);
  await page.goto(await server.loginUrl());
  await expect(
    page.getByRole("heading", { name: "Your conversation database could not be opened" }),
  ).toBeVisible();
  await expect(page.locator("[data-app-state='database']")).toBeVisible();
  await page.getByRole("button", { name: "Start fresh (keep the damaged file)" }).click();
  await chat.waitLoaded();
  await chat.sendMessage("Back in business");
  await expect(chat.assistantMessages()).toHaveCount(1);
  await expect(chat.conversations.getByText("Back in business")).toBeVisible();
});
