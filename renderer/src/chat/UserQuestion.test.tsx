/**
 * A question sent with files shows the typed text and the files as chips (name and size, the
 * text behind a disclosure), not the fenced blocks the message carries (issue 30, item 5).
 */
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { ControllerProvider } from "../app/controller-context";
import { AppController } from "../state/app-controller";
import { message } from "../testing/fixtures";
import { ScriptedApi } from "../testing/scripted-api";
import { composeMessage } from "./attachments";
import { MessageView } from "./MessageView";

function render(content: string): string {
  const controller = new AppController(new ScriptedApi({}));
  try {
    return renderToStaticMarkup(
      <ControllerProvider controller={controller}>
        <MessageView message={message({ id: "u1", role: "user", content })} />
      </ControllerProvider>,
    );
  } finally {
    controller.dispose();
  }
}

describe("a question with attached files", () => {
  it("shows the files as chips, not as fenced blocks", () => {
    const html = render(composeMessage("Summarize this", [{ name: "notes.txt", text: "Buy milk\n" }]));
    expect(html).toContain('<p class="message__plain">Summarize this</p>');
    expect(html).toContain('aria-label="Files sent with this message"');
    expect(html).toMatch(
      /<summary class="attachment-chip"><span class="attachment-chip__name">notes.txt<\/span>/,
    );
    expect(html).not.toContain("```");
  });

  it("keeps code the user typed as text", () => {
    const html = render("Why?\n\n```python\nprint(1)\n```");
    expect(html).not.toContain("Files sent with this message");
    expect(html).toContain("```python");
  });
});
