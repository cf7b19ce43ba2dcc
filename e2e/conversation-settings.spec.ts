import { join } from "node:path";
import { expect, test } from "@playwright/test";
import { ChatPage } from "./pages/chat-page";
import { ConversationSettingsPage } from "./pages/conversation-settings-page";
import { fixturesDir, ServerProcess } from "./server";

let server: ServerProcess | undefined;
test.afterEach(async () => {
  await server?.stop();
  server = undefined;
});

test("a chat's system prompt and sampling shape its answers, show on their record, become a preset and survive a reload", async ({
  page,
}) => {
  server = await ServerProcess.start({ model: join(fixturesDir(), "base.gguf") });
  const chat = new ChatPage(page);
  const settings = new ConversationSettingsPage(page);
  await chat.open(await server.loginUrl());

  // A new chat: its settings come first, then its first message.
  await settings.open();
  await settings.systemPrompt().fill("You are a terse pirate.");
  await settings.setNumber("Temperature", "0.8");
  await settings.setNumber("Max tokens", "4");
  await settings.setNumber("Seed", "42");
  await settings.save();
  // Focus is back on the opener.
  await expect(settings.opener).toBeFocused();

  await chat.sendMessage("Hello there");
  await chat.waitAnswered(1);
  const first = chat.assistantMessages().first();
  const record = settings.record(first);
  await expect(record).toContainText("Temperature 0.8");
  await expect(record).toContainText("Max tokens 4");
  await expect(record).toContainText("Seed 42");
  // Max tokens cut the answer.
  await expect(first.getByText(/^[1-4] tokens$/)).toBeVisible();
  // The prompt's text on demand.
  const prompt = record.getByText("System prompt: custom");
  await expect(record.getByText("You are a terse pirate.")).toBeHidden();
  await prompt.click();
  await expect(record.getByText("You are a terse pirate.")).toBeVisible();

  // The same values saved as a preset; Escape closes and focus goes back.
  await settings.open();
  await expect(settings.systemPrompt()).toHaveValue("You are a terse pirate.");
  await expect(settings.field("Seed")).toHaveValue("42");
  await settings.saveAsPreset("Pirate");
  await page.keyboard.press("Escape");
  await expect(settings.dialog).toHaveCount(0);
  await expect(settings.opener).toBeFocused();

  // Another chat starts with the defaults, then takes the preset.
  await chat.newChat.click();
  await chat.sendMessage("Ahoy");
  await chat.waitAnswered(1);
  await expect(settings.record(chat.assistantMessages().first())).toContainText("System prompt: default");
  await settings.open();
  await expect(settings.systemPrompt()).toHaveValue("");
  await settings.applyPreset("Pirate");
  await expect(settings.systemPrompt()).toHaveValue("You are a terse pirate.");
  await expect(settings.field("Max tokens")).toHaveValue("4");
  await settings.save();
  await chat.sendMessage("Where is the treasure?");
  await chat.waitAnswered(2);
  const applied = settings.record(chat.assistantMessages().last());
  await expect(applied).toContainText("Seed 42");
  await expect(applied).toContainText("System prompt: custom");
  // The earlier answer keeps what it was generated with.
  await expect(settings.record(chat.assistantMessages().first())).toContainText("System prompt: default");

  // After a reload: the answers' records, the chat's settings and the preset are still there.
  await page.reload();
  await chat.waitLoaded();
  await chat.waitAnswered(2);
  await expect(settings.record(chat.assistantMessages().last())).toContainText("Max tokens 4");
  await settings.open();
  await expect(settings.systemPrompt()).toHaveValue("You are a terse pirate.");
  await expect(settings.field("Temperature")).toHaveValue("0.8");
  await settings.presetPicker().click();
  await expect(page.getByRole("option", { name: "Pirate" })).toBeVisible();
});
