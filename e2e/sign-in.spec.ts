import { rmSync } from "node:fs";
import { expect, test, type Page } from "@playwright/test";
import { ChatPage } from "./pages/chat-page";
import { ServerProcess } from "./server";

const servers: ServerProcess[] = [];
test.afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function start(): Promise<ServerProcess> {
  const server = await ServerProcess.start();
  servers.push(server);
  return server;
}

/** An app API call from the page, authorized only by its cookie (as the UI makes them). */
function callFromPage(page: Page): Promise<number> {
  return page.evaluate(async () => {
    const res = await fetch("/api/call/models.status", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    return res.status;
  });
}

test("the printed URL signs the browser in once, leaves no code in the address bar, and the key in a URL is refused", async ({
  page,
  browser,
}) => {
  const server = await start();
  expect(server.url).toMatch(/\/\?code=[A-Za-z0-9_-]{43}$/);
  expect(server.url).not.toContain(server.apiKey);
  const chat = new ChatPage(page);
  await chat.open(server.url);
  expect(page.url()).toBe(`${server.origin}/`);
  expect(await callFromPage(page)).toBe(200);
  // Reloading, or reopening the link from history, keeps the session.
  await chat.open(server.url);
  await page.reload();
  await chat.waitLoaded();

  // The same link in another browser (a profile copied later) opens nothing.
  const other = await browser.newContext();
  try {
    const stranger = await other.newPage();
    const spent = await stranger.goto(server.url);
    expect(spent?.status()).toBe(401);
    await expect(stranger.getByText("each code works once")).toBeVisible();
    const keyInUrl = await stranger.goto(`${server.origin}/?token=${server.apiKey}`);
    expect(keyInUrl?.status()).toBe(400);
    await expect(stranger.getByText("must not be sent in a URL")).toBeVisible();
    expect(await callFromPage(stranger)).toBe(401);
    // The app itself, opened without signing in, says what to do.
    await stranger.goto(`${server.origin}/`);
    const signedOut = stranger.getByRole("region", { name: "You are signed out" });
    await expect(signedOut.getByRole("heading", { name: "You are signed out" })).toBeVisible();
    await expect(signedOut.getByRole("heading", { name: "Get a new sign-in link" })).toBeVisible();
  } finally {
    await other.close();
  }
});

test("two servers on 127.0.0.1 keep their own sessions in one browser", async ({ page, context }) => {
  const [first, second] = await Promise.all([start(), start()]);
  const firstTab = new ChatPage(page);
  await firstTab.open(await first.loginUrl());
  const secondPage = await context.newPage();
  const secondTab = new ChatPage(secondPage);
  await secondTab.open(await second.loginUrl());
  // Signing in to the second did not sign the first out.
  expect(await callFromPage(secondPage)).toBe(200);
  expect(await callFromPage(page)).toBe(200);
  await page.reload();
  await firstTab.waitLoaded();
  const names = (await context.cookies()).map((c) => c.name).filter((n) => n.startsWith("macaron_session"));
  expect(new Set(names).size).toBe(2);
});

test("a restart keeps the browser signed in; a new key signs it out and the page says how to get back in", async ({
  page,
}) => {
  // Three server starts (each forks an engine and opens the database).
  test.setTimeout(180_000);
  const first = await start();
  const chat = new ChatPage(page);
  await chat.open(first.url);
  expect(await callFromPage(page)).toBe(200);
  await first.stop({ keepData: true });

  // Same data folder: the kept key and session. The port is new; cookies are per host.
  const second = await ServerProcess.start({ dataDir: first.dataDir });
  servers.push(second);
  expect(second.apiKey).toBe(first.apiKey);
  await chat.open(`${second.origin}/`);
  expect(await callFromPage(page)).toBe(200);
  await second.stop({ keepData: true });

  const rotated = await ServerProcess.start({ dataDir: first.dataDir, extraArgs: ["--new-key"] });
  servers.push(rotated);
  try {
    expect(rotated.apiKey).not.toBe(first.apiKey);
    await page.goto(`${rotated.origin}/`);
    await expect(page.getByRole("heading", { name: "You are signed out" })).toBeVisible();
    expect(await callFromPage(page)).toBe(401);
    await chat.open(await rotated.loginUrl());
    expect(await callFromPage(page)).toBe(200);
  } finally {
    await rotated.stop();
    rmSync(first.dataDir, { recursive: true, force: true });
  }
});
