import { join } from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { AdaptersPage } from "./pages/adapters-page";
import { ChatPage } from "./pages/chat-page";
import { fixturesDir, ServerProcess } from "./server";

/** The largest `--max-tokens`: with the Chat fixture adapter pinned, answers end only here or at a full context. */
const LONG_ANSWER = 32768;

let server: ServerProcess | undefined;
test.afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** The engine holds each token this long (MACARON_ENGINE_TOKEN_DELAY_MS): ~80 s for a full context. */
const TOKEN_DELAY_MS = 20;

/**
 * A server whose answers cannot end before the test acts on them. The Chat fixture adapter,
 * pinned, makes the tiny base write "c" after "c" and never its end-of-turn token (the bare
 * random base may end an answer at any token); an answer still ends when the 4k context is full,
 * which the tiny model reached in ~3 s on a fast machine, so the engine holds each token 20 ms:
 * a full answer takes ~80 s, far past the few seconds the test needs to press Stop or Escape.
 */
async function startEndless(page: Page): Promise<{ chat: ChatPage; server: ServerProcess }> {
  const started = await ServerProcess.start({
    model: join(fixturesDir(), "base.gguf"),
    extraArgs: ["--max-tokens", String(LONG_ANSWER)],
    env: { MACARON_ENGINE_TOKEN_DELAY_MS: String(TOKEN_DELAY_MS) },
  });
  server = started;
  await started.call("adapters.install", { path: join(fixturesDir(), "adapters", "chat.gguf") });
  const chat = new ChatPage(page);
  await chat.open(await started.loginUrl());
  const adapters = new AdaptersPage(page);
  await expect(adapters.picker.getByRole("option", { name: "Chat" })).toHaveCount(1);
  await adapters.choose("Chat");
  await expect(adapters.picker).toHaveValue("pin:chat");
  return { chat, server: started };
}

test("first screen says what to do, and the demo model answers", async ({ page }) => {
  server = await ServerProcess.start();
  const chat = new ChatPage(page);
  await chat.open(await server.loginUrl());
  await expect(page.getByRole("heading", { name: "No model loaded" })).toBeVisible();
  await chat.useDemoModel();
  await chat.sendMessage("Hello there");
  await expect(chat.userMessages()).toHaveCount(1);
  // The trained demo answers on its own and stops; the router picks a specialist (or blends two),
  // so the answer is text, code, a list or a generated interface, and says which specialist gave it.
  const answer = chat.assistantMessages().first();
  await expect(
    answer.locator("p, pre, ol, ul, [role='group'][aria-label='Generated interface']").first(),
  ).toBeVisible();
  await expect(answer.getByRole("note").filter({ hasText: /auto \d+%/ })).toBeVisible();
  await expect(chat.send).toBeVisible();
});

test("tokens stream in, Stop ends the answer at once and keeps it, reload keeps the conversation", async ({
  page,
}) => {
  const { chat, server } = await startEndless(page);

  await chat.sendMessage("Tell me a long story");
  const answer = chat.assistantMessages().last();
  // Streaming: the Stop button is there while text is already visible.
  await expect(chat.stop).toBeVisible();
  await expect(chat.answerText(answer)).toHaveText(/\S{2,}/);
  await chat.stop.click();
  await expect(answer.getByText("Stopped")).toBeVisible();
  await expect(chat.send).toBeVisible();

  const detail = await listOnlyConversation(server);
  const stopped = detail.messages.find((m) => m.role === "assistant");
  expect(stopped?.status).toBe("stopped");
  expect(stopped?.content.length).toBeGreaterThan(0);
  expect(stopped?.stats?.tokens ?? 0).toBeLessThan(LONG_ANSWER);

  await page.reload();
  await chat.waitLoaded();
  await expect(chat.conversations.getByText("Tell me a long story")).toBeVisible();
  await expect(chat.userMessages()).toHaveCount(1);
  await expect(chat.assistantMessages().getByText("Stopped")).toBeVisible();
});

test("phone width: Escape in the open drawer closes it and leaves the answer running; Escape again stops it", async ({
  page,
}) => {
  const { chat } = await startEndless(page);
  await page.setViewportSize({ width: 390, height: 844 });
  await chat.sendMessage("Tell me a long story");
  const answer = chat.assistantMessages().last();
  await expect(chat.stop).toBeVisible();
  const toggle = page.getByRole("button", { name: "Show conversations" });
  await toggle.click();
  await expect(chat.conversations).toBeVisible();
  // The drawer's Escape is the drawer's: the answer keeps streaming.
  await page.keyboard.press("Escape");
  await expect(chat.conversations).toBeHidden();
  await expect(toggle).toBeFocused();
  await expect(chat.stop).toBeVisible();
  await expect(answer.getByText("Stopped")).toHaveCount(0);
  // With the drawer closed, Escape is "stop generating".
  await page.keyboard.press("Escape");
  await expect(answer.getByText("Stopped")).toBeVisible();
  await expect(chat.send).toBeVisible();
});

test("a second conversation is listed beside the first and both survive a server restart", async ({
  page,
}) => {
  server = await ServerProcess.start({ model: join(fixturesDir(), "base.gguf") });
  const chat = new ChatPage(page);
  await chat.open(await server.loginUrl());
  await chat.sendMessage("first conversation");
  await expect(chat.send).toBeVisible();
  await expect(chat.assistantMessages()).toHaveCount(1);

  await chat.newChat.click();
  await expect(chat.userMessages()).toHaveCount(0);
  await chat.sendMessage("second conversation");
  await expect(chat.assistantMessages()).toHaveCount(1);
  await expect(chat.send).toBeVisible();

  const first = server;
  await first.stop({ keepData: true });
  // The restarted server owns nothing; the first one cleans the dir up at the end.
  server = await ServerProcess.start({ dataDir: first.dataDir });
  await chat.open(await server.loginUrl());
  await expect(chat.conversations.getByText("first conversation")).toBeVisible();
  await expect(chat.conversations.getByText("second conversation")).toBeVisible();
  await chat.conversations.getByText("first conversation").click();
  await expect(chat.userMessages()).toHaveText([/first conversation/]);
  await server.stop();
  await first.stop();
});

test("the engine killed mid-answer: the turn shows an error, and the next message works", async ({
  page,
}) => {
  const { chat, server } = await startEndless(page);
  await chat.sendMessage("keep talking");
  await expect(chat.stop).toBeVisible();
  await expect(chat.answerText(chat.assistantMessages().last())).toHaveText(/\S{2,}/);

  const engines = server.childPids();
  expect(engines.length).toBeGreaterThan(0);
  for (const pid of engines) process.kill(pid, "SIGKILL");

  await expect(chat.assistantMessages().last().getByRole("alert")).toContainText(/engine/i);
  await chat.sendMessage("are you back?");
  await expect(chat.assistantMessages()).toHaveCount(2);
  // The message waits for the restart (a new process loading the model: seconds on a busy
  // machine); the header says so until the engine is back, the readiness this waits on.
  await expect(page.getByText("Engine restarting…")).toBeHidden({ timeout: 60_000 });
  // The restarted engine answers (text streams in); no need to wait for the whole answer.
  await expect(chat.answerText(chat.assistantMessages().last())).toHaveText(/\S{2,}/);
  await chat.stop.click();
  await expect(chat.send).toBeVisible();
  const detail = await listOnlyConversation(server);
  expect(detail.messages.map((m) => m.status)).toEqual(["complete", "error", "complete", "stopped"]);
});

test("bad model files get a clear message and the app keeps working", async ({ page }) => {
  server = await ServerProcess.start();
  const chat = new ChatPage(page);
  await chat.open(await server.loginUrl());
  const pathBox = page.getByRole("textbox", { name: "Model file path" });
  const open = page.getByRole("button", { name: "Open model" });

  await pathBox.fill(join(fixturesDir(), "missing.gguf"));
  await open.click();
  await expect(page.getByRole("alert")).toContainText(/not found|does not exist|no such/i);

  await pathBox.fill(join(fixturesDir(), "..", "..", "package.json"));
  await open.click();
  await expect(page.getByRole("alert")).toContainText(/not a GGUF/i);

  await pathBox.fill(join(fixturesDir(), "adapters", "coding.gguf"));
  await open.click();
  await expect(page.getByRole("alert")).toContainText(/adapter/i);

  await chat.useDemoModel();
  await chat.sendMessage("still fine?");
  await expect(chat.assistantMessages()).toHaveCount(1);
});

interface Detail {
  messages: { role: string; status: string; content: string; stats: { tokens: number } | null }[];
}
async function listOnlyConversation(s: ServerProcess): Promise<Detail> {
  const list = await s.call<{ id: string }[]>("conversations.list", {});
  expect(list).toHaveLength(1);
  return s.call<Detail>("conversations.get", { id: list[0]!.id });
}
