/**
 * What a user waits after Enter, in Chromium against headless mode (issue 30, item 3): Enter →
 * their own message on screen, and Enter → the answer's first text on screen, p50/p95, with the
 * trained demo ("Try the demo model": routing and specialists included). Times are taken in the
 * page (performance.now() at the Enter keydown, then a MutationObserver), not by Playwright's
 * round trips.
 *
 *   node scripts/ensure-build.mjs && npx tsx bench/send-feedback.ts [--turns 20]
 *
 * Prints JSON and writes bench/results/send-feedback.json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import { CHROMIUM_LAUNCH } from "../e2e/chromium";
import { ServerProcess } from "../e2e/server";
import { percentile } from "./stats";

const { values } = parseArgs({ options: { turns: { type: "string", default: "20" } }, strict: false });
const TURNS = Number(values.turns);

const PROMPTS = [
  "Write a short poem about the sea",
  "How do I reverse a list in Python?",
  "Tell me a joke",
  "What is the capital of France?",
  "Explain recursion simply",
];

/**
 * Installed in the page (as text: the bench is compiled without the DOM's types): stamps Enter,
 * the user's article and the answer's first text.
 */
const INSTRUMENT = `(() => {
  window.__send = [];
  const count = (name) => document.querySelectorAll('[role=log] article[aria-label="' + name + '"]').length;
  let users = 0;
  let current = null;
  document.addEventListener("keydown", (e) => {
    if (e.key !== "Enter" || e.shiftKey) return;
    users = count("You");
    current = { enter: performance.now(), user: 0, text: 0 };
    window.__send.push(current);
  }, true);
  new MutationObserver(() => {
    if (!current) return;
    const now = performance.now();
    if (!current.user && count("You") > users) current.user = now;
    if (!current.text) {
      const answers = document.querySelectorAll('[role=log] article[aria-label="Macaron"]');
      const last = answers[answers.length - 1];
      const body = last && last.querySelector(".message__body");
      // Visible answer text: the body's text (the typing dots have none).
      const text = body ? (body.textContent || "").trim() : "";
      if (answers.length >= count("You") && text.length > 0) current.text = now;
    }
  }).observe(document.body, { subtree: true, childList: true, characterData: true });
})()`;

interface Sample {
  enter: number;
  user: number;
  text: number;
}

async function main(): Promise<void> {
  const server = await ServerProcess.start();
  const browser = await chromium.launch(CHROMIUM_LAUNCH);
  try {
    // The page's CSP forbids eval, which string predicates need; the app's own code is unchanged.
    const page = await (await browser.newContext({ bypassCSP: true })).newPage();
    await page.goto(await server.loginUrl());
    await page.locator("[data-app-state='loaded']").waitFor();
    await page.getByRole("button", { name: "Try the demo model" }).click();
    const box = page.getByRole("textbox", { name: "Message" });
    await box.waitFor();
    await page.waitForFunction('!document.querySelector("textarea").disabled');
    await page.evaluate(INSTRUMENT);
    for (let i = 0; i < TURNS; i++) {
      await box.fill(PROMPTS[i % PROMPTS.length]!);
      await box.press("Enter");
      // This turn's question and first answer text are on screen (stamped by the instrument)…
      await page.waitForFunction(
        `window.__send.length === ${i + 1} && window.__send[${i}].user > 0 && window.__send[${i}].text > 0`,
      );
      // …and the answer is complete: i + 1 answers, none streaming. Waiting only for the Send
      // button raced: it is still there for a moment after Enter, so turns were typed over answers.
      await page.waitForFunction(
        `document.querySelectorAll("[role=log] article[aria-label='Macaron']").length === ${i + 1} && ` +
          `document.querySelectorAll("[role=log] [aria-busy='true']").length === 0`,
      );
      await page.getByRole("button", { name: "Send" }).waitFor();
    }
    const samples = await page.evaluate<Sample[]>("window.__send");
    const user = samples.filter((s) => s.user > 0).map((s) => s.user - s.enter);
    const text = samples.filter((s) => s.text > 0).map((s) => s.text - s.enter);
    // The TTFT the UI shows for the same answers (its tooltip names the parts).
    const shown = await page.getByText(/^TTFT /).allTextContents();
    const round = (x: number) => Math.round(x);
    const result = {
      bench: "send-feedback",
      date: new Date().toISOString(),
      turns: TURNS,
      enterToUserMessageMs: {
        p50: round(percentile(user, 50)),
        p95: round(percentile(user, 95)),
        n: user.length,
      },
      enterToFirstTextMs: {
        p50: round(percentile(text, 50)),
        p95: round(percentile(text, 95)),
        n: text.length,
      },
      shownTtft: shown.slice(-5),
    };
    mkdirSync(join(import.meta.dirname, "results"), { recursive: true });
    writeFileSync(
      join(import.meta.dirname, "results", "send-feedback.json"),
      JSON.stringify(result, null, 2),
    );
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await browser.close();
    await server.stop();
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
