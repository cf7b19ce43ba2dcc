/**
 * A conversations.import file made by hand, for specs that open conversations no model would
 * write (hostile markdown, stored UI documents): the export format core reads back.
 */
import type { UiDocument } from "../electron/api/genui";

export /** An export file with one conversation per entry: each answer a stored UI document or text. */
function exportFile(
  conversations: { title: string; answers: (UiDocument | string)[]; pinned?: string }[],
): string {
  const now = Date.now();
  return JSON.stringify({
    format: "macaron-export",
    version: 1,
    exportedAt: now,
    conversations: conversations.map((c, ci) => ({
      id: `c${ci}`,
      title: c.title,
      createdAt: now,
      updatedAt: now,
      adapters: c.pinned ? { pinned: c.pinned } : "auto",
      messages: c.answers.flatMap((a, i) => [
        {
          id: `c${ci}-u${i}`,
          role: "user",
          content: `question ${i}`,
          status: "complete",
          createdAt: now + 2 * i,
        },
        typeof a === "string"
          ? {
              id: `c${ci}-a${i}`,
              role: "assistant",
              content: a,
              status: "complete",
              createdAt: now + 2 * i + 1,
            }
          : {
              id: `c${ci}-a${i}`,
              role: "assistant",
              content: "(ui)",
              status: "complete",
              createdAt: now + 2 * i + 1,
              format: "ui",
              ui: a,
            },
      ]),
    })),
  });
}
