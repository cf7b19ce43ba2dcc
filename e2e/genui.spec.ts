/**
 * GenUI in Chromium against the headless server. Deterministic components come in through the
 * real import path (conversations.import of a conversation whose answer carries a `ui`
 * document, validated like model output); the tiny model supplies the live UI-mode turns,
 * whose nonsense the grammar keeps well-formed and validation turns into inert fallbacks.
 */
import { join } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import BetterSqlite3 from "better-sqlite3";
import fc from "fast-check";
import { expect, test, type Page, type Request } from "@playwright/test";
import { CATALOG_VERSION, validateDocument, type UiDocument } from "../electron/api/genui";
import { mutatedDocumentArb } from "../testing/samples/genui-arbitraries";
import {
  everyComponentDocument,
  HOSTILE_MARKDOWN,
  hostileSpecs,
  runLogDocument,
} from "../testing/samples/genui-samples";
import { exportFile } from "./export-file";
import { ChatPage } from "./pages/chat-page";
import { GenuiPage } from "./pages/genui-page";
import { fixturesDir, ServerProcess } from "./server";

interface Detail {
  messages: Array<{
    id: string;
    role: string;
    content: string;
    status: string;
    format?: string;
    ui?: UiDocument | null;
    interaction?: {
      messageId: string;
      componentId: string;
      action: string;
      values: Record<string, unknown>;
    } | null;
  }>;
}

let server: ServerProcess | undefined;
test.afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** What core stores for a spec (a refused one is an answer with one inert node). */
function stored(spec: unknown): UiDocument {
  const r = validateDocument(spec);
  if (r.ok) return r.document;
  return {
    version: CATALOG_VERSION,
    blocks: [
      {
        kind: "ui",
        root: { type: "Invalid", id: "~answer", props: { reason: r.reason, originalType: null } },
      },
    ],
  };
}

/** Watches for anything a hostile answer could do: run script, fetch off-machine, throw. */
async function guard(page: Page): Promise<{ external: string[]; errors: string[] }> {
  const external: string[] = [];
  const errors: string[] = [];
  page.on("request", (r: Request) => {
    const url = new URL(r.url());
    if (!["127.0.0.1"].includes(url.hostname) && url.protocol !== "data:") external.push(r.url());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  await page.addInitScript(() => {
    // The canary: any script a model answer manages to run sets it.
    Object.defineProperty(globalThis, "__canaryReady", { value: true });
  });
  return { external, errors };
}

async function expectNothingRan(page: Page, seen: { external: string[]; errors: string[] }): Promise<void> {
  expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
  expect(
    await page.evaluate(() => (globalThis as unknown as { __canaryReady?: boolean }).__canaryReady),
  ).toBe(true);
  expect(seen.external).toEqual([]);
  expect(seen.errors).toEqual([]);
  const log = page.getByRole("log");
  // No element that can run or fetch anything, no model-made link that is not the web or mail.
  expect(
    await log
      .locator("script, iframe, object, embed, img, link, style, meta, form[action], svg image")
      .count(),
  ).toBe(0);
  expect(
    await log
      .locator('a[href]:not([href^="http://"]):not([href^="https://"]):not([href^="mailto:"])')
      .count(),
  ).toBe(0);
  const styles = await log
    .locator("[style]")
    .evaluateAll((els: { getAttribute(name: string): string | null }[]) =>
      els.map((e) => e.getAttribute("style") ?? ""),
    );
  const styled = styles.filter((s) => /url\(|expression|javascript/i.test(s));
  expect(styled).toEqual([]);
}

test("a UI turn renders components; a submitted form becomes a stored turn; the submitted state survives a reload", async ({
  page,
}) => {
  server = await ServerProcess.start({
    model: join(fixturesDir(), "base.gguf"),
    extraArgs: ["--adapters", join(fixturesDir(), "adapters"), "--max-tokens", "96"],
  });
  const seen = await guard(page);
  await server.call("conversations.import", {
    json: exportFile([
      { title: "Running log", answers: [runLogDocument()], pinned: "ui" },
      { title: "Half-filled", answers: [runLogDocument()] },
    ]),
  });
  const chat = new ChatPage(page);
  const genui = new GenuiPage(page);
  await chat.open(await server.loginUrl());
  await chat.conversations.getByText("Running log").click();

  const answer = chat.assistantMessages().first();
  const form = genui.form(answer, "Log your run");
  await expect(form).toBeVisible();
  await genui.fillRunForm(form);
  await form.getByRole("button", { name: "Save run" }).click();

  // The interaction is a user turn (shown as what was done), answered in UI mode by the model.
  await expect(chat.userMessages().last()).toContainText("Submitted “Log your run”");
  await expect(chat.assistantMessages()).toHaveCount(2);
  await expect(chat.send).toBeVisible();
  const reply = chat.assistantMessages().last();
  await expect(genui.ui(reply)).toBeVisible();
  await expect(genui.submittedForm(answer, "Log your run").getByRole("status")).toHaveText("Submitted");

  const [conversation] = await server.call<Array<{ id: string }>>("conversations.list", {});
  const detail = await server.call<Detail>("conversations.get", { id: conversation!.id });
  const [, ui, event, answered] = detail.messages;
  const values = {
    distance: 5.5,
    date: "2024-05-01",
    feel: "hard",
    notes: "Windy by the river",
    race: true,
    effort: 7,
  };
  expect(event).toMatchObject({
    role: "user",
    interaction: { messageId: ui!.id, componentId: "run-form", action: "submit", values },
  });
  expect(JSON.parse(event!.content)).toMatchObject({
    uiEvent: { component: "run-form", action: "submit", values },
  });
  // The engine answered that turn in UI mode, and the answer was stored as a document.
  expect(answered).toMatchObject({ role: "assistant", format: "ui", status: "complete" });
  expect(answered!.ui?.version).toBe(CATALOG_VERSION);

  await page.reload();
  await chat.waitLoaded();
  await chat.conversations.getByText("Running log").click();
  const again = genui.submittedForm(chat.assistantMessages().first(), "Log your run");
  await expect(again.getByRole("status")).toHaveText("Submitted");
  await expect(again.getByRole("definition")).toContainText([
    "5.5",
    "2024-05-01",
    "Hard",
    "Windy by the river",
    "Yes",
    "7",
  ]);

  // A typed message in this conversation (pinned to the UI adapter) is a live UI-mode turn.
  await chat.sendMessage("Plan my week");
  await expect(chat.assistantMessages()).toHaveCount(3);
  await expect(chat.send).toBeVisible();
  const live = chat.assistantMessages().last();
  await expect(genui.ui(live)).toBeVisible();
  // No raw JSON reaches the screen: the tiny model's nonsense becomes components or fallbacks.
  await expect(live.getByText('"version"')).toHaveCount(0);
  await expectNothingRan(page, seen);

  // A form left half-filled (the user goes to another chat) is recorded as abandoned, with no turn.
  await chat.conversations.getByText("Half-filled").click();
  await genui
    .form(chat.assistantMessages().first(), "Log your run")
    .getByRole("textbox", { name: "Notes" })
    .fill("maybe later");
  await chat.conversations.getByText("Running log").click();
  const db = new BetterSqlite3(join(server.dataDir, "macaron.db"), { readonly: true });
  try {
    const abandoned = () =>
      db
        .prepare(
          "SELECT outcome, values_json AS v, user_message_id AS u FROM genui_events WHERE action = 'abandon'",
        )
        .all();
    await expect
      .poll(abandoned)
      .toEqual([{ outcome: "abandoned", v: expect.stringContaining("maybe later") as unknown, u: null }]);
  } finally {
    db.close();
  }
});

test("hostile markdown and specs, and 300 generated + mutated specs, render with nothing run or fetched", async ({
  page,
}) => {
  test.setTimeout(180_000);
  server = await ServerProcess.start({ model: join(fixturesDir(), "base.gguf") });
  const seen = await guard(page);
  const generated = fc.sample(mutatedDocumentArb, { numRuns: 300, seed: 20_240_501 }).map(stored);
  const groups = [
    { title: "Hostile specs", answers: hostileSpecs().map(stored) },
    { title: "Hostile markdown", answers: [...HOSTILE_MARKDOWN] },
    ...Array.from({ length: 6 }, (_, i) => ({
      title: `Generated ${i + 1}`,
      answers: generated.slice(i * 50, i * 50 + 50),
    })),
  ];
  await server.call("conversations.import", { json: exportFile(groups) });
  const chat = new ChatPage(page);
  await chat.open(await server.loginUrl());
  let rendered = 0;
  for (const group of groups) {
    await chat.conversations.getByText(group.title, { exact: true }).click();
    await expect(chat.assistantMessages()).toHaveCount(group.answers.length);
    if (typeof group.answers[0] !== "string") {
      await expect(page.getByRole("log").getByRole("group", { name: "Generated interface" })).toHaveCount(
        group.answers.length,
      );
    }
    rendered += group.answers.length;
    await expectNothingRan(page, seen);
  }
  expect(rendered).toBe(hostileSpecs().length + HOSTILE_MARKDOWN.length + 300);
});

test("charts hide their drawing from screen readers with nothing focusable inside it (axe)", async ({
  page,
}) => {
  server = await ServerProcess.start({ model: join(fixturesDir(), "base.gguf") });
  await server.call("conversations.import", {
    json: exportFile([{ title: "Every component", answers: [everyComponentDocument()] }]),
  });
  const chat = new ChatPage(page);
  await chat.open(await server.loginUrl());
  await chat.conversations.getByText("Every component").click();
  const charts = chat.assistantMessages().first().locator("figure.genui-chart");
  // Bar, line and pie, each drawn (recharts' svg) before axe looks at them.
  await expect(charts).toHaveCount(3);
  for (const chart of await charts.all()) await expect(chart.locator("svg").first()).toBeVisible();
  const results = await new AxeBuilder({ page }).include(".genui-chart").analyze();
  expect(
    results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`),
  ).toEqual([]);
  // The rule that failed before (a tabbable svg and pie group under aria-hidden) was checked.
  expect(results.passes.map((r) => r.id)).toContain("aria-hidden-focus");
});
