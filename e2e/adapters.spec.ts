import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";
import { writeWrongBaseAdapter } from "../native/gguf/adapters";
import { AdaptersPage } from "./pages/adapters-page";
import { ChatPage } from "./pages/chat-page";
import { fixturesDir, ServerProcess } from "./server";

interface AdapterRow {
  id: string;
  enabled: boolean;
  scale: number;
}
interface Detail {
  conversation: { adapters: unknown };
  messages: Array<{ id: string; role: string; content: string; status: string }>;
}

let server: ServerProcess | undefined;
let scratch: string | undefined;
test.afterEach(async () => {
  await server?.stop();
  server = undefined;
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

const adapterFile = (id: string) => join(fixturesDir(), "adapters", `${id}.gguf`);

/**
 * A server on the tiny base with fixture adapters installed through the API (the panel's own
 * install is tested once below), and the UI opened on it. Short answers unless told otherwise.
 */
async function start(
  page: Page,
  {
    adapters = ["chat", "coding", "agent", "ui"],
    maxTokens = 24,
  }: { adapters?: string[]; maxTokens?: number } = {},
) {
  server = await ServerProcess.start({
    model: join(fixturesDir(), "base.gguf"),
    extraArgs: ["--max-tokens", String(maxTokens)],
  });
  for (const id of adapters) await server.call("adapters.install", { path: adapterFile(id) });
  const chat = new ChatPage(page);
  await chat.open(await server.loginUrl());
  const ui = new AdaptersPage(page);
  // The picker lists the installed adapters once the UI has fetched them.
  for (const id of adapters) await expect(ui.picker.getByRole("option", { name: nameOf(id) })).toHaveCount(1);
  return { chat, ui, server };
}

/** The part of an element (no DOM types in this project's Node config) that says if it scrolls sideways. */
interface Widths {
  scrollWidth: number;
  clientWidth: number;
}

function nameOf(id: string): string {
  return id === "ui" ? "UI" : id[0]!.toUpperCase() + id.slice(1);
}

async function onlyConversation(s: ServerProcess): Promise<Detail> {
  const [c] = await s.call<Array<{ id: string }>>("conversations.list", {});
  return s.call<Detail>("conversations.get", { id: c!.id });
}

test("a conversation pinned to Coding answers in code and says so under the answer", async ({ page }) => {
  const { chat, ui, server } = await start(page);
  await ui.choose("Coding");
  await chat.sendMessage("hello there");
  const answer = chat.assistantMessages().last();
  await expect(answer).toContainText("{{{");
  await expect(chat.send).toBeVisible();
  await expect(ui.routingChip(answer)).toHaveAccessibleName("Answered by Coding (pinned)");
  await expect(answer.getByText("Coding")).toBeVisible();
  // The choice made before the chat existed became the conversation's own.
  await expect(ui.picker).toHaveValue("pin:coding");
  expect((await onlyConversation(server)).conversation.adapters).toEqual({ pinned: "coding" });
});

test("auto routes a coding question to the Coding adapter and shows how sure it was", async ({ page }) => {
  const { chat, ui } = await start(page);
  const manifest = JSON.parse(readFileSync(join(fixturesDir(), "adapters", "coding.json"), "utf8")) as {
    routingExamples: string[];
  };
  await expect(ui.picker).toHaveValue("auto");
  await chat.sendMessage(manifest.routingExamples[0]!);
  const answer = chat.assistantMessages().last();
  await expect(ui.routingChip(answer)).toHaveAccessibleName(/^Answered by Coding \(auto, \d+% sure\)$/);
  await expect(answer.getByText(/Coding · auto \d+%/)).toBeVisible();
  await expect(answer).toContainText("{{{");
});

test("Answer again with… Chat replaces the answer with the Chat adapter's", async ({ page }) => {
  const { chat, ui, server } = await start(page);
  await ui.choose("Coding");
  await chat.sendMessage("say something");
  const answer = chat.assistantMessages().last();
  await expect(answer).toContainText("{{{");
  await expect(chat.send).toBeVisible();

  await ui.answerAgainWith(answer, "Chat");
  await expect(chat.assistantMessages()).toHaveCount(1);
  await expect(chat.assistantMessages().last()).toContainText("ccc");
  await expect(chat.assistantMessages().last()).not.toContainText("{");
  await expect(ui.routingChip(chat.assistantMessages().last())).toHaveAccessibleName(/^Answered by Chat\b/);
  await expect(chat.send).toBeVisible();
  // Core hid the old answer: the stored transcript has one question and one answer.
  const detail = await onlyConversation(server);
  expect(detail.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  expect(detail.messages[1]!.content).toMatch(/^c+$/);
  // Regenerate answers again with the same adapters as the answer it replaces (Chat).
  const before = await onlyConversation(server);
  await chat.assistantMessages().last().getByRole("button", { name: "Regenerate" }).click();
  await expect
    .poll(async () => (await onlyConversation(server)).messages.map((m) => m.id))
    .not.toEqual(before.messages.map((m) => m.id));
  await expect(chat.send).toBeVisible();
  await expect(chat.assistantMessages()).toHaveCount(1);
  await expect(chat.assistantMessages().last()).toContainText("ccc");
  await expect(ui.routingChip(chat.assistantMessages().last())).toHaveAccessibleName(/^Answered by Chat\b/);
});

test("a blend set in the Blend… dialog answers and is shown as a blend", async ({ page }) => {
  const { chat, ui, server } = await start(page, { adapters: ["chat", "coding"] });
  await ui.picker.selectOption({ label: "Blend…" });
  const dialog = page.getByRole("dialog", { name: "Blend adapters" });
  await dialog.getByRole("slider", { name: "Chat" }).fill("0.5");
  await dialog.getByRole("slider", { name: "Coding" }).fill("0.5");
  await dialog.getByRole("button", { name: "Apply blend" }).click();
  await expect(dialog).toBeHidden();
  await expect(ui.picker.getByRole("option", { selected: true })).toHaveText("Blend: Chat 0.5 + Coding 0.5");

  await chat.sendMessage("mix it");
  const answer = chat.assistantMessages().last();
  await expect(answer.getByText("Blend: Chat 0.5 + Coding 0.5")).toBeVisible();
  await expect(ui.routingChip(answer)).toHaveAccessibleName("Answered by a blend of Chat 0.5 and Coding 0.5");
  expect((await onlyConversation(server)).conversation.adapters).toEqual({
    blend: { chat: 0.5, coding: 0.5 },
  });
});

test("the Adapters panel installs, disables, rescales and removes adapters", async ({ page }) => {
  const { ui, server } = await start(page, { adapters: ["chat", "coding", "agent"] });
  await ui.openPanel();
  await expect(ui.cards()).toHaveCount(3);

  await ui.install(adapterFile("ui"));
  await expect(ui.card("UI")).toBeVisible();
  await expect(ui.fact("UI", "Version")).toHaveText("1.0.0");
  await expect(ui.adapterPath).toHaveValue("");

  const enableAgent = ui.enableSwitch("Agent");
  await expect(enableAgent).toBeChecked();
  await ui.toggleEnabled("Agent");
  await expect(enableAgent).not.toBeChecked();
  await expect(ui.card("Agent")).toContainText("Off");

  await ui.setScale("Chat", 0.5);
  await expect
    .poll(async () => (await server.call<AdapterRow[]>("adapters.list")).find((a) => a.id === "chat")?.scale)
    .toBe(0.5);

  await ui.remove("Coding");
  await expect(ui.cards()).toHaveCount(3);
  const stored = await server.call<AdapterRow[]>("adapters.list");
  expect(stored.map((a) => a.id).sort()).toEqual(["agent", "chat", "ui"]);
  expect(stored.find((a) => a.id === "agent")?.enabled).toBe(false);

  await ui.closePanel();
  await expect(ui.picker.getByRole("option", { name: "Agent" })).toHaveCount(0);
  await expect(ui.picker.getByRole("option", { name: "Coding" })).toHaveCount(0);
  await expect(ui.picker.getByRole("option", { name: "UI" })).toHaveCount(1);
});

test("a wrong-base adapter, random bytes and a base model are refused with a clear message", async ({
  page,
}) => {
  const { ui, server } = await start(page, { adapters: ["chat", "coding"] });
  scratch = mkdtempSync(join(tmpdir(), "macaron-adapters-"));
  const wrongBase = await writeWrongBaseAdapter(join(scratch, "wrong-base.gguf"));
  const random = join(scratch, "random.gguf");
  writeFileSync(random, randomBytes(4096));

  await ui.openPanel();
  const alert = ui.panel.getByRole("alert");
  const cases: Array<[string, RegExp]> = [
    [wrongBase, /does not fit the loaded model/i],
    [random, /not a GGUF/i],
    [join(fixturesDir(), "base.gguf"), /base model, not a LoRA adapter/i],
  ];
  for (const [path, message] of cases) {
    await ui.install(path);
    await expect(alert).toContainText(message);
    await expect(ui.cards()).toHaveCount(2);
  }
  expect((await server.call<AdapterRow[]>("adapters.list")).length).toBe(2);
});

test("switching adapters while an answer streams: it ends normally and the next turn uses Chat", async ({
  page,
}) => {
  const errors: Error[] = [];
  page.on("pageerror", (e) => errors.push(e));
  const { chat, ui, server } = await start(page, { maxTokens: 3000 });
  await ui.choose("Coding");
  await chat.sendMessage("Tell me a long story");
  await expect(chat.stop).toBeVisible();
  await expect(chat.assistantMessages().last()).toContainText("{{");

  await ui.choose("Chat");
  await expect(ui.picker).toHaveValue("pin:chat");
  await expect(chat.send).toBeVisible({ timeout: 45_000 });
  const first = chat.assistantMessages().first();
  await expect(first.getByRole("alert")).toHaveCount(0);
  await expect(ui.routingChip(first)).toHaveAccessibleName("Answered by Coding (pinned)");

  await chat.sendMessage("and now?");
  await expect(chat.assistantMessages()).toHaveCount(2);
  const second = chat.assistantMessages().last();
  await expect(second).toContainText("ccc");
  await expect(ui.routingChip(second)).toHaveAccessibleName("Answered by Chat (pinned)");
  // A long answer: stop it if it still runs (it may already have ended, which is fine too).
  await chat.stop.click({ timeout: 2_000 }).catch(() => undefined);
  await expect(chat.send).toBeVisible({ timeout: 45_000 });
  const stored = await onlyConversation(server);
  expect(stored.messages[1]!.status).toMatch(/^(complete|stopped)$/);
  expect(stored.messages[1]!.content).toMatch(/^\{+$/);
  expect(errors).toEqual([]);
});

test("compare shows base and adapter side by side; settings change the KV cache policy", async ({ page }) => {
  const { ui, server } = await start(page, { adapters: ["coding"] });
  await ui.openPanel();
  await ui.card("Coding").getByRole("button", { name: "Compare Coding with the base model" }).click();
  const compare = ui.card("Coding").getByRole("region", { name: "Compare Coding with the base model" });
  await compare.getByRole("textbox", { name: "Test prompt" }).fill("Reverse a string");
  await compare.getByRole("button", { name: "Compare", exact: true }).click();
  await expect(compare.getByRole("heading", { name: "Base model", exact: true })).toBeVisible();
  const adapterHeading = compare.getByRole("heading", { name: "Coding", exact: true });
  await expect(adapterHeading).toBeVisible();
  await expect(compare.locator("pre").last()).toContainText("{{{");
  await ui.closePanel();

  await page.getByRole("button", { name: "Settings", exact: true }).click();
  const settings = page.getByRole("dialog", { name: "Settings" });
  const policy = settings.getByRole("combobox", { name: "KV cache policy when adapters change" });
  await policy.selectOption({ label: "Activated LoRA (fastest, approximate)" });
  await expect
    .poll(async () => (await server.call<{ kvPolicy: string }>("settings.get")).kvPolicy)
    .toBe("activated");
  await expect(policy).toBeEnabled();
});

test("at phone width the panel is one column of cards: no sideways scroll, compare in its card, remove asks in view", async ({
  page,
}) => {
  const viewport = { width: 390, height: 844 };
  await page.setViewportSize(viewport);
  const { ui } = await start(page, { adapters: ["chat", "coding", "agent"] });
  await ui.openPanel();
  await expect(ui.cards()).toHaveCount(3);
  const overflow = () =>
    ui.panel.evaluate((dialog: Widths & { ownerDocument: { documentElement: Widths } }) => ({
      panel: dialog.scrollWidth - dialog.clientWidth,
      page:
        dialog.ownerDocument.documentElement.scrollWidth - dialog.ownerDocument.documentElement.clientWidth,
    }));
  expect(await overflow()).toEqual({ panel: 0, page: 0 });
  // The cards' react-aria switch, slider and buttons pass axe (WCAG 2.2 AA) inside the panel.
  const axe = await new AxeBuilder({ page })
    .include(".adapter-cards")
    .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"])
    .analyze();
  expect(axe.passes.length).toBeGreaterThan(0);
  expect(axe.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual(
    [],
  );
  // One column: every card starts at the same x, each below the one before, names in view.
  const boxes = await Promise.all((await ui.cards().all()).map((c) => c.boundingBox()));
  expect(new Set(boxes.map((b) => Math.round(b!.x))).size).toBe(1);
  for (let i = 1; i < boxes.length; i++)
    expect(boxes[i]!.y).toBeGreaterThan(boxes[i - 1]!.y + boxes[i - 1]!.height - 1);
  // Each card's name shows in full across the width (scrolled to, as the panel scrolls down).
  for (const name of ["Chat", "Coding", "Agent"]) {
    const heading = ui.card(name).getByRole("heading", { name, exact: true });
    await heading.scrollIntoViewIfNeeded();
    await expect(heading).toBeInViewport({ ratio: 1 });
  }

  // Compare on the middle card: the result is inside that card, not at the end of the panel.
  const card = ui.card("Coding");
  await card.getByRole("button", { name: "Compare Coding with the base model" }).click();
  const compare = card.getByRole("region", { name: "Compare Coding with the base model" });
  await compare.getByRole("textbox", { name: "Test prompt" }).fill("Reverse a string");
  await compare.getByRole("button", { name: "Compare", exact: true }).click();
  const output = compare.locator("pre").last();
  await expect(output).toContainText("{{{");
  const cardBox = (await card.boundingBox())!;
  const resultBox = (await compare.locator("pre").first().boundingBox())!;
  expect(resultBox.x).toBeGreaterThanOrEqual(cardBox.x);
  expect(resultBox.x + resultBox.width).toBeLessThanOrEqual(cardBox.x + cardBox.width);
  expect(resultBox.y).toBeGreaterThanOrEqual(cardBox.y);
  expect(resultBox.y + resultBox.height).toBeLessThanOrEqual(cardBox.y + cardBox.height);
  // The Agent card comes after the result, not between the card and its result.
  expect((await ui.card("Agent").boundingBox())!.y).toBeGreaterThan(resultBox.y + resultBox.height);
  expect(await overflow()).toEqual({ panel: 0, page: 0 });

  // The remove confirmation of the last card opens wholly inside the viewport; Escape closes
  // only it (the panel stays) and gives focus back to the Remove button.
  const removeAgent = ui.card("Agent").getByRole("button", { name: "Remove Agent" });
  await removeAgent.click();
  const confirm = ui.removeDialog("Agent");
  await expect(confirm).toBeVisible();
  await expect(confirm.getByRole("button", { name: "Yes, remove" })).toBeVisible();
  const box = (await confirm.boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.y).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(viewport.width);
  expect(box.y + box.height).toBeLessThanOrEqual(viewport.height);
  await page.keyboard.press("Escape");
  await expect(confirm).toBeHidden();
  await expect(removeAgent).toBeFocused();
  await expect(ui.panel).toBeVisible();
  await expect(ui.cards()).toHaveCount(3);
});
