/**
 * Rich answers, attachments and "Answer as text" in Chromium against the headless server with
 * the tiny model. Exact markdown comes in through the real import path (conversations.import,
 * as hostile-markdown.spec.ts does); attachments go through the file picker and the model's
 * tokenizer (chat.countTokens); the failed UI answer is a stored document with an inert part,
 * answered again as text by the real model.
 */
import { join } from "node:path";
import { expect, test } from "@playwright/test";
import { CATALOG_VERSION, type UiDocument } from "../electron/api/genui";
import { exportFile } from "./export-file";
import { ChatPage } from "./pages/chat-page";
import { GenuiPage } from "./pages/genui-page";
import { fixturesDir, ServerProcess } from "./server";

let server: ServerProcess | undefined;
test.afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const RICH = [
  "| Planet | Moons |",
  "| --- | ---: |",
  "| Mars | 2 |",
  "| Jupiter | 95 |",
  "",
  "- [x] measured",
  "- [ ] published",
  "",
  "```ts",
  'const greeting: string = "hello";',
  "```",
  "",
  "Inline $E = mc^2$ and a display formula:",
  "",
  "$$",
  "\\int_0^1 x^2 \\, dx = \\frac{1}{3}",
  "$$",
].join("\n");

test("an answer's GFM table, highlighted code and math render, with KaTeX's fonts from the app itself", async ({
  page,
}) => {
  server = await ServerProcess.start({ model: join(fixturesDir(), "base.gguf") });
  const origin = server.origin;
  const errors: string[] = [];
  const external: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy/i.test(m.text())) errors.push(m.text());
  });
  page.on("request", (r) => {
    if (!r.url().startsWith(origin) && !r.url().startsWith("data:")) external.push(r.url());
  });
  await server.call("conversations.import", {
    json: exportFile([{ title: "Rich answer", answers: [RICH] }]),
  });
  const chat = new ChatPage(page);
  await chat.open(server.url);
  const font = page.waitForResponse((r) => /KaTeX_[\w-]+\.woff2/.test(r.url()));
  await chat.conversations.getByText("Rich answer", { exact: true }).click();

  const answer = chat.assistantMessages().first();
  const table = answer.getByRole("table");
  await expect(table.getByRole("columnheader", { name: "Planet" })).toBeVisible();
  await expect(table.getByRole("cell", { name: "Jupiter" })).toBeVisible();
  const boxes = answer.getByRole("checkbox");
  await expect(boxes).toHaveCount(2);
  await expect(boxes.first()).toBeChecked();
  await expect(boxes.first()).toBeDisabled();
  await expect(boxes.last()).not.toBeChecked();
  await expect(answer.locator("code .hljs-keyword").first()).toHaveText("const");
  await expect(answer.locator("code .hljs-string")).toHaveText('"hello"');
  await expect(answer.locator(".katex").first()).toBeVisible();
  await expect(answer.locator(".katex-display")).toHaveCount(1);
  await expect(answer.locator(".katex-display .mfrac")).toBeVisible();
  expect(await answer.textContent()).not.toContain("$$");

  const fontResponse = await font;
  expect(new URL(fontResponse.url()).origin).toBe(origin);
  expect(fontResponse.status()).toBe(200);
  expect(external).toEqual([]);
  expect(errors).toEqual([]);
});

test("a file attached through the picker shows as a chip with its tokens, is sent in the message, and refused files say why", async ({
  page,
}) => {
  server = await ServerProcess.start({ model: join(fixturesDir(), "base.gguf") });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  const chat = new ChatPage(page);
  await chat.open(server.url);
  await expect(chat.message).toBeEnabled();

  const code = "def add(a, b):\n    return a + b\n";
  const picker = page.getByLabel("Attach files");
  await expect(page.getByRole("button", { name: "Attach file" })).toBeEnabled();
  await picker.setInputFiles([
    { name: "add.py", mimeType: "text/x-python", buffer: Buffer.from(code) },
    { name: "photo.png", mimeType: "image/png", buffer: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0]) },
  ]);
  const chips = page.getByRole("list", { name: "Attached files" }).getByRole("listitem");
  await expect(chips).toHaveCount(1);
  // The chip's count is the loaded model's tokenizer's, exactly what chat.countTokens says.
  const expected = await server.call<{ tokens: number; source: string }>("chat.countTokens", {
    text: "```add.py\n" + code + "```",
  });
  expect(expected.source).toBe("tokenizer");
  await expect(chips.first()).toContainText("add.py");
  await expect(chips.first()).toContainText(`${expected.tokens.toLocaleString("en")} tokens`);
  await expect(chips.first()).not.toContainText("estimate");
  await expect(page.getByRole("alert").filter({ hasText: "photo.png was not attached" })).toHaveText(
    /photo\.png was not attached: it is not a text file\./,
  );

  // A file too long for the context window: the warning names the count, and leaves with the file.
  await picker.setInputFiles({
    name: "long.txt",
    mimeType: "text/plain",
    buffer: Buffer.from("word ".repeat(12_000)),
  });
  await expect(chips).toHaveCount(2);
  const warning = page.getByRole("alert").filter({ hasText: "context window" });
  await expect(warning).toBeVisible();
  await page.getByRole("button", { name: "Remove long.txt" }).click();
  await expect(chips).toHaveCount(1);
  await expect(warning).toHaveCount(0);

  await chat.sendMessage("What does this do?");
  await expect(chat.userMessages()).toHaveCount(1);
  const sent = chat.userMessages().first();
  await expect(sent).toContainText("What does this do?");
  // The file is a chip in the bubble (its text on demand), not a fenced block.
  const sentFiles = sent.getByRole("list", { name: "Files sent with this message" }).getByRole("listitem");
  await expect(sentFiles).toHaveCount(1);
  await expect(sentFiles.first()).toContainText("add.py");
  await expect(sent).not.toContainText("```");
  await sentFiles.first().getByText("add.py").click();
  await expect(sent).toContainText("return a + b");
  await expect(chips).toHaveCount(0);
  await chat.waitAnswered(1);
  // What was sent is what history keeps (and search and export read).
  const [conversation] = await server.call<Array<{ id: string }>>("conversations.list", {});
  const detail = await server.call<{ messages: Array<{ role: string; content: string }> }>(
    "conversations.get",
    {
      id: conversation!.id,
    },
  );
  expect(detail.messages[0]!.content).toBe("What does this do?\n\n```add.py\n" + code + "```");
  expect(errors).toEqual([]);
});

test("a UI answer with a part that could not be shown offers Answer as text, which answers the same question as text", async ({
  page,
}) => {
  const started = await ServerProcess.start({
    model: join(fixturesDir(), "base.gguf"),
    extraArgs: ["--max-tokens", "48"],
  });
  server = started;
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  const broken: UiDocument = {
    version: CATALOG_VERSION,
    blocks: [
      { kind: "text", markdown: "Here is your plan:" },
      {
        kind: "ui",
        root: { type: "Invalid", id: "plan", props: { reason: "unknown component", originalType: "Zzz" } },
      },
    ],
  };
  await server.call("conversations.import", {
    json: exportFile([{ title: "Broken UI", answers: [broken] }]),
  });
  const chat = new ChatPage(page);
  const genui = new GenuiPage(page);
  await chat.open(server.url);
  await chat.conversations.getByText("Broken UI", { exact: true }).click();

  const answer = chat.assistantMessages().first();
  await expect(genui.fallbacks(answer)).toHaveText(
    /Part of this answer could not be shown: unknown component/,
  );
  const asText = answer.getByRole("button", { name: "Answer as text" });
  await asText.click();
  // The new answer replaces the old one in place (still one assistant message), so the count
  // cannot tell when it is done: wait for core to record it complete.
  const lastMessage = async () => {
    const [conversation] = await started.call<Array<{ id: string }>>("conversations.list", {});
    const detail = await started.call<{
      messages: Array<{ role: string; format?: string; content: string; status: string }>;
    }>("conversations.get", { id: conversation!.id });
    return detail.messages.at(-1)!;
  };
  await expect
    .poll(async () => {
      const last = await lastMessage();
      return last.format === undefined && last.status !== "streaming" ? last.status : "not yet";
    })
    .toBe("complete");
  await chat.waitAnswered(1);
  const reply = chat.assistantMessages().last();
  await expect(genui.ui(reply)).toHaveCount(0);
  await expect(genui.fallbacks(reply)).toHaveCount(0);
  await expect(reply.getByRole("button", { name: "Answer as text" })).toHaveCount(0);
  await expect(chat.userMessages()).toHaveCount(1);

  const last = await lastMessage();
  expect(last.role).toBe("assistant");
  expect(last.format).toBeUndefined();
  expect(last.content.length).toBeGreaterThan(0);
  expect(errors).toEqual([]);
});
