import { join } from "node:path";
import { expect, test } from "@playwright/test";
import { ChatPage } from "./pages/chat-page";
import { fixturesDir, ServerProcess } from "./server";

let server: ServerProcess | undefined;
test.afterEach(async () => {
  await server?.stop();
  server = undefined;
});

interface Detail {
  messages: { role: string; content: string; versions?: string[] }[];
}

test("edit and resend, regenerate, flip between versions; a reload and the export keep the shown branch", async ({
  page,
}) => {
  // Short answers: every turn ends on its own quickly.
  server = await ServerProcess.start({
    model: join(fixturesDir(), "base.gguf"),
    extraArgs: ["--max-tokens", "8"],
  });
  const chat = new ChatPage(page);
  await chat.open(await server.loginUrl());
  await chat.sendMessage("first question");
  await chat.waitAnswered(1);
  await chat.sendMessage("second question");
  await chat.waitAnswered(2);
  await expect(chat.page.getByRole("group", { name: "Versions" })).toHaveCount(0);

  // Edit: Esc cancels and gives focus back to Edit; Ctrl+Enter sends the new version.
  const second = chat.userMessages().nth(1);
  await second.getByRole("button", { name: "Edit message" }).click();
  const editor = second.getByRole("textbox", { name: "Edit message" });
  await expect(editor).toBeFocused();
  await expect(editor).toHaveValue("second question");
  await editor.press("Escape");
  await expect(editor).toHaveCount(0);
  await expect(second.getByRole("button", { name: "Edit message" })).toBeFocused();
  await second.getByRole("button", { name: "Edit message" }).click();
  await editor.fill("second question, edited");
  await editor.press("Control+Enter");
  await chat.waitAnswered(2);
  await expect(chat.userMessages()).toHaveCount(2);
  const question = chat.userMessages().nth(1);
  await expect(question.getByText("second question, edited")).toBeVisible();
  await expect(chat.versions(question).count).toHaveText("2 / 2");

  // Regenerate the answer to the edit: 2 / 2 on the answer.
  const answer = chat.assistantMessages().nth(1);
  await answer.getByRole("button", { name: "Regenerate" }).click();
  await chat.waitAnswered(2);
  await expect(chat.versions(answer).count).toHaveText("2 / 2");
  await expect(chat.versions(answer).next).toBeDisabled();

  // Flip: the first answer to the edit, then the original question with its own answer.
  await chat.versions(answer).previous.click();
  await expect(chat.versions(answer).count).toHaveText("1 / 2");
  await chat.versions(question).previous.click();
  await expect(chat.versions(question).count).toHaveText("1 / 2");
  await expect(question.getByText("second question", { exact: true })).toBeVisible();
  await expect(chat.versions(answer).count).toHaveCount(0); // the original answer has no versions
  // Back to the edit: its branch comes back as it was left (the first answer shown).
  await chat.versions(question).next.click();
  await expect(question.getByText("second question, edited")).toBeVisible();
  await expect(chat.versions(answer).count).toHaveText("1 / 2");
  const shownAnswer = await chat.answerText(answer).textContent();

  // A reload shows the same versions and counts.
  await page.reload();
  await chat.waitLoaded();
  await chat.waitAnswered(2);
  await expect(chat.versions(chat.userMessages().nth(1)).count).toHaveText("2 / 2");
  await expect(chat.versions(chat.assistantMessages().nth(1)).count).toHaveText("1 / 2");
  await expect(chat.userMessages().nth(1).getByText("second question, edited")).toBeVisible();

  // The export holds the shown branch, as the transcript does.
  const [conversation] = await server.call<{ id: string }[]>("conversations.list", {});
  const detail = await server.call<Detail>("conversations.get", { id: conversation!.id });
  const { json } = await server.call<{ json: string }>("conversations.export", { id: conversation!.id });
  const exported = (JSON.parse(json) as { conversations: Detail[] }).conversations[0]!;
  expect(exported.messages.map((m) => m.content)).toEqual(detail.messages.map((m) => m.content));
  expect(exported.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
    "first question",
    "second question, edited",
  ]);
  expect(detail.messages[3]?.content.trim()).toBe(shownAnswer?.trim());
});
