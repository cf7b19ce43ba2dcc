/**
 * Export and import of conversations (conversations.export / conversations.import). The
 * controller only moves JSON text; saving the file is the view's job (a Blob download).
 */
import { errorMessage } from "../api";
import type { RendererApi } from "../api";

export interface ExportFile {
  fileName: string;
  json: string;
}

export interface ImportCounts {
  conversations: number;
  messages: number;
  memories: number;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** "Imported 1 conversation, 4 messages and 2 memories." */
export function importSummary(counts: ImportCounts): string {
  return (
    `Imported ${plural(counts.conversations, "conversation", "conversations")}, ` +
    `${plural(counts.messages, "message", "messages")} and ${plural(counts.memories, "memory", "memories")}.`
  );
}

export class TransferController {
  constructor(
    private readonly api: RendererApi,
    /** Shows a short message to the user (the app's toast area). */
    private readonly notify: (text: string) => void,
  ) {}

  /** One conversation, or everything without `id`; null (with a notice) when it failed. */
  async exportJson(id?: string): Promise<ExportFile | null> {
    try {
      return await this.api.call("conversations.export", id ? { id } : {});
    } catch (error) {
      this.notify(`Export failed: ${errorMessage(error)}`);
      return null;
    }
  }

  /** Import a file's text; the server validates it whole before writing anything. */
  async importJson(json: string): Promise<ImportCounts | null> {
    if (json.trim().length < 2) {
      this.notify("Import failed: the file is empty.");
      return null;
    }
    try {
      const counts = await this.api.call("conversations.import", { json });
      this.notify(importSummary(counts));
      return counts;
    } catch (error) {
      this.notify(`Import failed: ${errorMessage(error)}`);
      return null;
    }
  }
}
