import { expect, test, type Locator, type Page } from "@playwright/test";
import { ChatPage } from "./pages/chat-page";
import { ServerProcess } from "./server";

/**
 * The shell at a phone width and a laptop width, light and dark: one header row, the composer
 * and the newest answer on screen, toasts clear of the composer, and the conversation drawer out
 * of the way once a chat is picked. Boxes, not screenshots: they say what overlaps.
 */
const VIEWPORTS = [
  { name: "small phone", width: 360, height: 740 },
  { name: "phone", width: 390, height: 844 },
  { name: "laptop", width: 1280, height: 800 },
] as const;
const SCHEMES = ["light", "dark"] as const;
/** One row of controls; 155 px when it wrapped at phone width (issue 13). */
const MAX_HEADER_PX = 64;
/** --bg in base.css, light and dark. */
const LIGHT_BG = "rgb(251, 250, 248)";
const DARK_BG = "rgb(26, 25, 24)";

let server: ServerProcess;

test.beforeAll(async ({ browser }) => {
  server = await ServerProcess.start();
  // The demo model ships with the app: loaded once, every test's page finds it.
  const page = await browser.newPage();
  const chat = new ChatPage(page);
  await chat.open(await server.loginUrl());
  await chat.useDemoModel({ timeout: 60_000 });
  await page.close();
});
test.afterAll(async () => {
  await server?.stop();
});

type Box = { x: number; y: number; width: number; height: number };

async function box(locator: Locator): Promise<Box> {
  const b = await locator.boundingBox();
  expect(b, "element has a box").not.toBeNull();
  return b!;
}

function intersects(a: Box, b: Box): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

async function openChat(page: Page): Promise<ChatPage> {
  const chat = new ChatPage(page);
  await chat.open(await server.loginUrl());
  return chat;
}

for (const viewport of VIEWPORTS) {
  for (const scheme of SCHEMES) {
    test(`${viewport.name} ${viewport.width}px, ${scheme}: one header row, composer and answer visible, toasts clear of the composer`, async ({
      page,
    }) => {
      await page.setViewportSize({ width: viewport.width, height: viewport.height });
      await page.emulateMedia({ colorScheme: scheme });
      const chat = await openChat(page);
      // "System" (the default) follows the emulated scheme.
      await expect(page.locator("html")).toHaveAttribute("data-theme", "system");
      await expect(page.locator("body")).toHaveCSS(
        "background-color",
        scheme === "dark" ? DARK_BG : LIGHT_BG,
      );

      await chat.sendMessage(`Hello from ${viewport.name} ${scheme}`);
      await expect(chat.assistantMessages()).toHaveCount(1);
      await expect(chat.send).toBeVisible();

      // The header sits inside <main>, so it is not a banner landmark: found by its element.
      const header = page.locator("header.model-bar");
      const headerBox = await box(header);
      expect(headerBox.height).toBeLessThanOrEqual(MAX_HEADER_PX);
      // The model name is readable, not "M..": whole, or cut (tooltip) no narrower than ~14 characters.
      const name = header.locator(".model-bar__name");
      // (Sizes read in the page; e2e compiles without the DOM library.)
      const width = await name.evaluate((el) => {
        const sized = el as unknown as { scrollWidth: number; clientWidth: number };
        return { whole: sized.scrollWidth, shown: sized.clientWidth };
      });
      expect(width.shown).toBeGreaterThanOrEqual(Math.min(width.whole, 110));
      expect(await name.getAttribute("title")).toContain(await name.textContent());

      const composer = await box(chat.message);
      const answer = chat.assistantMessages().last();
      await expect(chat.message).toBeInViewport();
      await expect(answer).toBeInViewport();
      const answerBox = await box(answer);
      expect(intersects(headerBox, composer)).toBe(false);
      expect(answerBox.y).toBeGreaterThanOrEqual(headerBox.y + headerBox.height - 1);
      expect(answerBox.y).toBeLessThan(composer.y);
      expect(composer.y + composer.height).toBeLessThanOrEqual(viewport.height);

      // Dialogs: inline buttons when wide, one "More" menu at phone width.
      if (viewport.width < 900) {
        await expect(header.getByRole("button", { name: "Settings", exact: true })).toBeHidden();
        await expect(header.getByRole("button", { name: "More" })).toBeVisible();
      } else {
        await expect(header.getByRole("button", { name: "Settings", exact: true })).toBeVisible();
        await expect(header.getByRole("button", { name: "More" })).toBeHidden();
      }

      // A toast (Undo for a delete) stays clear of the composer and the header.
      const toggle = page.getByRole("button", { name: "Show conversations" });
      if (viewport.width < 760) await toggle.click();
      const item = chat.conversations
        .getByRole("listitem")
        .filter({ hasText: `Hello from ${viewport.name} ${scheme}` });
      await item.getByRole("button", { name: "Delete" }).click();
      const toast = page.getByRole("status", { name: "Notifications" }).locator(".toast").first();
      await expect(toast).toBeVisible();
      if (viewport.width < 760) {
        await page.keyboard.press("Escape");
        await expect(chat.conversations).toBeHidden();
        await expect(toggle).toBeFocused();
      }
      const toastBox = await box(toast);
      expect(intersects(toastBox, await box(chat.message))).toBe(false);
      expect(intersects(toastBox, headerBox)).toBe(false);
      await toast.getByRole("button", { name: "Undo" }).click();
      await expect(toast).toBeHidden();
    });
  }
}

test("phone width: the drawer opens from the header and closes once a chat is picked", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  const chat = await openChat(page);
  await chat.sendMessage("Pick me from the drawer");
  await expect(chat.send).toBeVisible();
  const toggle = page.getByRole("button", { name: "Show conversations" });
  await toggle.click();
  await chat.newChat.click();
  await expect(chat.userMessages()).toHaveCount(0);
  await expect(chat.conversations).toBeHidden();
  await toggle.click();
  await expect(chat.conversations).toBeVisible();
  await expect(toggle).toHaveAttribute("aria-expanded", "true");
  await chat.conversations.getByRole("link", { name: "Pick me from the drawer" }).first().click();
  await expect(chat.userMessages()).toHaveCount(1);
  await expect(chat.conversations).toBeHidden();
  await expect(chat.message).toBeInViewport();

  // Picking the chat that is already open closes it too (no hash change then).
  await toggle.click();
  await chat.conversations.getByRole("link", { name: "Pick me from the drawer" }).first().click();
  await expect(chat.conversations).toBeHidden();
});

test("the theme setting forces light or dark and System follows the OS again", async ({ page }) => {
  await page.emulateMedia({ colorScheme: "light" });
  const chat = await openChat(page);
  const body = page.locator("body");
  await page.getByRole("button", { name: "Settings", exact: true }).click();
  const settings = page.getByRole("dialog", { name: "Settings" });
  const theme = settings.getByLabel("Theme");
  await theme.selectOption("dark");
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  await expect(body).toHaveCSS("background-color", DARK_BG);

  // Stored with the app settings: a reload (and another browser) gets it.
  await page.reload();
  await chat.waitLoaded();
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  expect((await server.call<{ theme: string }>("settings.get")).theme).toBe("dark");

  await page.getByRole("button", { name: "Settings", exact: true }).click();
  await settings.getByLabel("Theme").selectOption("system");
  await expect(page.locator("html")).toHaveAttribute("data-theme", "system");
  await expect(body).toHaveCSS("background-color", LIGHT_BG);
  // Live: the OS switching to dark switches the window, no reload.
  await page.emulateMedia({ colorScheme: "dark" });
  await expect(body).toHaveCSS("background-color", DARK_BG);
});
