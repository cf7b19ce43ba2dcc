/**
 * The "Local API server" setting in Chromium against headless mode (the same core code and
 * v1-only server the desktop app runs): turned on in Settings at a port the test picked, the
 * address and key read from the page, /v1 called from the test with them, a taken port
 * reported, a regenerated key, and the port refusing once it is turned off.
 */
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { expect, test } from "@playwright/test";
import { ChatPage } from "./pages/chat-page";
import { LocalServerPage } from "./pages/local-server-page";
import { fixturesDir, ServerProcess } from "./server";

let server: ServerProcess | undefined;
let blocker: Server | undefined;

test.afterEach(async () => {
  await server?.stop();
  server = undefined;
  await new Promise<void>((done) => (blocker ? blocker.close(() => done()) : done()));
  blocker = undefined;
});

/** A port nobody listens on right now (the OS picks it, then it is released). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, "127.0.0.1", done));
  const address = probe.address();
  await new Promise<void>((done) => probe.close(() => done()));
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  return address.port;
}

function models(address: string, key?: string): Promise<Response> {
  return fetch(`${address}/models`, key ? { headers: { authorization: `Bearer ${key}` } } : {});
}

test("the local API server is turned on in Settings and answers /v1 with the shown key", async ({ page }) => {
  server = await ServerProcess.start({ model: join(fixturesDir(), "base.gguf") });
  const chat = new ChatPage(page);
  const local = new LocalServerPage(page);
  await chat.open(await server.loginUrl());
  await local.openSettings();

  // Off by default, on LM Studio's port.
  await expect(local.toggle).not.toBeChecked();
  await expect(local.port).toHaveValue("1234");
  await expect(local.state).toHaveText("Off.");

  // A port another program holds: the reason is shown and the app keeps working.
  const takenPort = await freePort();
  blocker = createServer();
  await new Promise<void>((done) => blocker!.listen(takenPort, "127.0.0.1", done));
  await local.usePort(takenPort);
  // A click, not check(): the switch follows the server's answer, not the click itself.
  await local.toggle.click();
  await expect(local.toggle).toBeChecked();
  await expect(local.section.getByRole("alert")).toContainText(`Port ${takenPort} is in use`);
  await expect(local.state).toHaveText("Not running.");

  // Another port: running, with the address and key to give clients.
  const port = await freePort();
  await local.usePort(port);
  await local.expectRunning(port);
  await expect(local.section.getByRole("alert")).toHaveCount(0);
  const address = await local.address();
  expect(address).toBe(`http://127.0.0.1:${port}/v1`);
  const key = await local.apiKey();

  const listed = await models(address, key);
  expect(listed.status).toBe(200);
  const body = (await listed.json()) as { object: string; data: Array<{ id: string }> };
  expect(body.object).toBe("list");
  expect(body.data.map((m) => m.id)).toContain("base");
  expect((await models(address)).status).toBe(401);
  // The example request on the page carries the address and the shown key.
  await expect(local.section.getByLabel("Example request")).toHaveText(
    `curl ${address}/models -H "Authorization: Bearer ${key}"`,
  );

  // A new key: the old one stops working at once.
  await local.regenerateKey();
  const newKey = await local.apiKey();
  expect(newKey).not.toBe(key);
  expect((await models(address, key)).status).toBe(401);
  expect((await models(address, newKey)).status).toBe(200);

  // Off, with the keyboard: the port refuses connections.
  await local.toggle.focus();
  await page.keyboard.press("Space");
  await expect(local.toggle).not.toBeChecked();
  await expect(local.state).toHaveText("Off.");
  await expect(models(address, newKey)).rejects.toThrow();
});
