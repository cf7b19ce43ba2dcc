/**
 * `npx tsx e2e/screenshots.ts [--out docs/screenshots]`: the screenshots in docs/, taken the way
 * the e2e suite drives the app (headless mode, Debian's Chromium): the first screen, the demo's
 * empty chat with its suggestions, and a suggestion answered — light and dark (the app follows
 * the system's scheme), at 1280 and 390 px wide. A fresh server per shot set, so each starts on
 * the first screen. Needs `npm run build` (run by ensure-build).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { chromium } from "@playwright/test";
import { CHROMIUM_LAUNCH } from "./chromium";
import { ChatPage } from "./pages/chat-page";
import { ServerProcess } from "./server";

const root = resolve(import.meta.dirname, "..");
const { values } = parseArgs({ options: { out: { type: "string", default: "docs/screenshots" } } });
const out = resolve(root, values.out);
mkdirSync(out, { recursive: true });
execFileSync(process.execPath, [join(root, "scripts/ensure-build.mjs")], { cwd: root, stdio: "inherit" });

const browser = await chromium.launch(CHROMIUM_LAUNCH);
try {
  for (const scheme of ["light", "dark"] as const)
    for (const width of [1280, 390]) {
      const server = await ServerProcess.start();
      try {
        const context = await browser.newContext({
          viewport: { width, height: width > 500 ? 800 : 844 },
          colorScheme: scheme,
        });
        const page = await context.newPage();
        const chat = new ChatPage(page);
        const shot = async (name: string) => {
          const path = join(out, `${name}-${scheme}-${width}.png`);
          await page.screenshot({ path });
          console.log(path);
        };
        await chat.open(await server.loginUrl());
        await page.getByRole("button", { name: "Try the demo model" }).first().waitFor();
        await shot("first-screen");
        await page.getByRole("button", { name: "Try the demo model" }).first().click();
        const about = page.getByRole("region", { name: "About the demo model" });
        await about.getByRole("button", { name: /word is in a sentence/ }).waitFor();
        await shot("demo-suggestions");
        await about.getByRole("button", { name: /word is in a sentence/ }).click();
        await chat.waitAnswered(1);
        await shot("demo-answer");
        await context.close();
      } finally {
        await server.stop();
      }
    }
} finally {
  await browser.close();
}
