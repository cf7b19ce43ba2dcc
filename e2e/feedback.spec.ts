import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "@playwright/test";
import { startCloud, type RunningCloud } from "../cloud/server";
import { ChatPage } from "./pages/chat-page";
import { FeedbackPage } from "./pages/feedback-page";
import { fixturesDir, ServerProcess } from "./server";

interface Detail {
  messages: Array<{ id: string; role: string; rating: string | null; corrected: boolean }>;
}

let server: ServerProcess | undefined;
let cloud: RunningCloud | undefined;
let cloudDir: string | undefined;
test.afterEach(async () => {
  await server?.stop();
  await cloud?.close();
  if (cloudDir) rmSync(cloudDir, { recursive: true, force: true });
  server = cloud = cloudDir = undefined;
});

async function onlyConversation(s: ServerProcess): Promise<Detail> {
  const [conversation] = await s.call<Array<{ id: string }>>("conversations.list", {});
  return s.call<Detail>("conversations.get", { id: conversation!.id });
}

test("rate an answer good or bad with a reason, correct it, regenerate it", async ({ page }) => {
  server = await ServerProcess.start({ model: join(fixturesDir(), "base.gguf") });
  const chat = new ChatPage(page);
  const feedback = new FeedbackPage(page);
  await chat.open(await server.loginUrl());
  await chat.sendMessage("Hello there");
  const answer = chat.assistantMessages().last();
  await expect(feedback.good(answer)).toBeVisible();

  await feedback.good(answer).click();
  await expect(feedback.good(answer)).toHaveAttribute("aria-pressed", "true");
  await expect(feedback.bad(answer)).toHaveAttribute("aria-pressed", "false");
  await expect.poll(async () => (await onlyConversation(server!)).messages.at(-1)?.rating).toBe("good");

  await feedback.rateBad(answer, "It made up words");
  await expect(feedback.bad(answer)).toHaveAttribute("aria-pressed", "true");
  await expect(feedback.good(answer)).toHaveAttribute("aria-pressed", "false");
  await expect.poll(async () => (await onlyConversation(server!)).messages.at(-1)?.rating).toBe("bad");

  await feedback.correct(answer, "Hello! How can I help you today?");
  await expect(answer.getByText("Corrected", { exact: true })).toBeVisible();
  await expect(answer.getByRole("region", { name: "Your correction" })).toContainText(
    "How can I help you today?",
  );
  await expect.poll(async () => (await onlyConversation(server!)).messages.at(-1)?.corrected).toBe(true);

  // The rating survives a reload (it comes from the stored message).
  await page.reload();
  await chat.waitLoaded();
  await chat.conversations.getByText("Hello there").click();
  const reloaded = chat.assistantMessages().last();
  await expect(feedback.bad(reloaded)).toHaveAttribute("aria-pressed", "true");
  await expect(reloaded.getByText("Corrected", { exact: true })).toBeVisible();

  const before = (await onlyConversation(server)).messages.at(-1)!.id;
  await reloaded.getByRole("button", { name: "Regenerate" }).click();
  await expect(chat.send).toBeVisible();
  await expect.poll(async () => (await onlyConversation(server!)).messages.at(-1)?.id).not.toBe(before);
  const fresh = chat.assistantMessages().last();
  await expect(chat.assistantMessages()).toHaveCount(1);
  await expect(feedback.good(fresh)).toHaveAttribute("aria-pressed", "false");
  await expect(feedback.bad(fresh)).toHaveAttribute("aria-pressed", "false");
  await expect(fresh.getByText("Corrected", { exact: true })).toHaveCount(0);
});

test("sharing starts off and sends nothing; with consent the upload is redacted, synced, deletable, and Off purges", async ({
  page,
}) => {
  cloudDir = mkdtempSync(join(tmpdir(), "macaron-cloud-e2e-"));
  cloud = await startCloud({ dataDir: cloudDir, port: 0 });
  const installs = () =>
    (cloud!.store.db.prepare("SELECT count(*) AS n FROM installs").get() as { n: number }).n;
  server = await ServerProcess.start({
    model: join(fixturesDir(), "base.gguf"),
    env: { MACARON_FEEDBACK_ENDPOINT: cloud.url },
  });
  const chat = new ChatPage(page);
  const feedback = new FeedbackPage(page);
  await chat.open(await server.loginUrl());

  await feedback.openPrivacy();
  await expect(feedback.level("Off")).toBeChecked();
  await expect(feedback.privacy.getByLabel("Feedback service URL")).toHaveValue(cloud.url);
  await feedback.closePrivacy();

  // Off: feedback stays on this device.
  await chat.sendMessage("First question");
  const first = chat.assistantMessages().last();
  await feedback.good(first).click();
  await expect(feedback.good(first)).toHaveAttribute("aria-pressed", "true");
  await feedback.openPrivacy();
  await feedback.privacy.getByRole("button", { name: "Preview next upload" }).click();
  await expect(feedback.privacy.getByText("Nothing is waiting to be sent.")).toBeVisible();
  expect(cloud.store.countItems()).toBe(0);
  expect(installs()).toBe(0);

  // Turning it on asks first.
  await feedback.level("Ratings and conversation text").check();
  await expect(feedback.privacy.getByRole("group", { name: "Confirm sharing" })).toBeVisible();
  await feedback.privacy.getByRole("button", { name: "Turn on sharing" }).click();
  await expect(feedback.level("Ratings and conversation text")).toBeChecked();
  await feedback.closePrivacy();

  await chat.sendMessage("You can reach me at alice.smith@example.com any time");
  await expect(chat.assistantMessages()).toHaveCount(2);
  await expect(chat.send).toBeVisible();
  const second = chat.assistantMessages().last();
  await feedback.good(second).click();
  await expect(feedback.good(second)).toHaveAttribute("aria-pressed", "true");

  await feedback.openPrivacy();
  const preview = await feedback.previewText();
  expect(preview).toContain("[EMAIL]");
  expect(preview).not.toContain("alice.smith@example.com");
  expect(preview).not.toContain("example.com");
  await expect(feedback.privacy.getByText(/\d+ items?, .*bytes?/)).toBeVisible();

  await feedback.privacy.getByRole("button", { name: "Sync now" }).click();
  await expect(feedback.privacy.getByText("0 items queued")).toBeVisible();
  await expect.poll(() => cloud!.store.countItems()).toBeGreaterThan(0);
  const stored = cloud.store.db.prepare("SELECT json FROM items").all() as Array<{ json: string }>;
  expect(stored.map((r) => r.json).join("\n")).not.toContain("alice.smith@example.com");

  await feedback.privacy.getByRole("button", { name: "Delete my uploaded data" }).click();
  await feedback.privacy.getByRole("button", { name: "Yes, delete my data" }).click();
  await expect(
    feedback.privacy.getByText(/The feedback service deleted [1-9]\d* uploaded items?\./),
  ).toBeVisible();
  expect(cloud.store.countItems()).toBe(0);
  await feedback.closePrivacy();

  // Something queued, then Off: the queue is emptied and the page says how much.
  await feedback.bad(second).click();
  await expect(feedback.bad(second)).toHaveAttribute("aria-pressed", "true");
  await feedback.openPrivacy();
  // click, not check(): the radio follows the app's state, which a busy machine may render a
  // frame later than check() looks; the assertions below wait for it.
  await feedback.level("Off").click();
  await expect(feedback.privacy.getByText(/^Stopped sharing — \d+ queued items? deleted$/)).toBeVisible();
  await expect(feedback.level("Off")).toBeChecked();
  expect((await server.call<{ sync: { queued: number } }>("privacy.get")).sync.queued).toBe(0);
});
