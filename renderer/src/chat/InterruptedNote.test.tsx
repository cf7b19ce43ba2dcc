/**
 * An answer cut off by a full disk says so where the answer is (an alert with core's sentence),
 * not just "Interrupted"; one interrupted by the app closing keeps the quiet badge.
 */
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { Message } from "../../../electron/api";
import { ControllerProvider } from "../app/controller-context";
import { AppController } from "../state/app-controller";
import { ScriptedApi } from "../testing/scripted-api";
import { MessageView } from "./MessageView";

/** Core's sentence for an answer cut off by a full disk (electron/core/db/disk-full.ts). */
const DISK_FULL_ANSWER =
  "The disk is full: this answer was cut off where it could no longer be saved. Free some disk space, then answer again.";

function answer(over: Partial<Message>): Message {
  return {
    id: "a1",
    conversationId: "c1",
    role: "assistant",
    content: "Once upon a time",
    status: "interrupted",
    error: null,
    createdAt: 1,
    stats: null,
    routing: null,
    rating: null,
    corrected: false,
    memoriesUsed: [],
    context: null,
    steps: [],
    ...over,
  };
}

function render(message: Message): string {
  const controller = new AppController(new ScriptedApi({}));
  try {
    return renderToStaticMarkup(
      <ControllerProvider controller={controller}>
        <MessageView message={message} last />
      </ControllerProvider>,
    );
  } finally {
    controller.dispose();
  }
}

describe("an interrupted answer", () => {
  it("cut off by a full disk shows why and what to do, as an alert", () => {
    const html = render(answer({ error: DISK_FULL_ANSWER }));
    expect(html).toContain('role="alert"');
    expect(html).toContain("The disk is full");
    expect(html).toContain("Free some disk space");
  });

  it("interrupted by the app closing keeps the plain badge", () => {
    const html = render(answer({}));
    expect(html).toContain('title="The app closed while this answer was being written"');
    expect(html).not.toContain('role="alert"');
  });
});
