/**
 * The app's own tools for the Agent, under the server name "builtin": search the user's
 * conversations, remember and forget a memory, and answer with a UI component (GenUI). They go
 * through the same catalog, schema check and permission prompt as an MCP server's tools.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { type Memory, TOOL_RESULT_MAX_CHARS } from "../../api";
import { validateDocument } from "../../api/genui";
import type { ConversationSearch } from "../conversations/conversation-search";
import type { GenuiStore } from "../genui/genui-store";
import type { MemoryService } from "../memory/memory-service";
import { BUILTIN_SERVER, type CallableTool, type ToolOutcome, type ToolSource } from "./tool-types";

/** The answer a call is made for: show_ui stores its component on it. */
export interface AnswerContext {
  conversationId: string;
  messageId: string;
}

/**
 * Which answer the current call belongs to. The agent loop runs each call inside it, so that a
 * built-in tool reached through the catalog (whose `call` knows nothing of answers) still knows.
 */
export const answerContext = new AsyncLocalStorage<AnswerContext>();

export interface BuiltinToolsDeps {
  search: Pick<ConversationSearch, "search">;
  memory?: Pick<MemoryService, "create" | "delete" | "list">;
  genui?: Pick<GenuiStore, "markUiAnswer" | "saveDocument">;
}

const SEARCH_LIMIT = 10;

const TOOLS: readonly CallableTool[] = [
  {
    server: BUILTIN_SERVER,
    name: "search_conversations",
    description: "Search the user's past conversations by words; returns matching messages with snippets.",
    inputSchema: {
      type: "object",
      properties: {
        query: { type: "string", minLength: 1, maxLength: 500, description: "Words to look for." },
      },
      required: ["query"],
      additionalProperties: false,
    },
  },
  {
    server: BUILTIN_SERVER,
    name: "remember",
    description: "Save a fact about the user as a long-term memory (as if the user typed it).",
    inputSchema: {
      type: "object",
      properties: { text: { type: "string", minLength: 1, maxLength: 1000, description: "The fact." } },
      required: ["text"],
      additionalProperties: false,
    },
  },
  {
    server: BUILTIN_SERVER,
    name: "forget",
    description: "Delete a long-term memory, by its id or by its text.",
    inputSchema: {
      type: "object",
      properties: {
        id: { type: "string", minLength: 1, maxLength: 100 },
        text: { type: "string", minLength: 1, maxLength: 1000 },
      },
      additionalProperties: false,
    },
  },
  {
    server: BUILTIN_SERVER,
    name: "show_ui",
    description:
      'Answer with UI components: a document {"version":1,"blocks":[…]} in the app\'s GenUI catalog.',
    inputSchema: {
      type: "object",
      properties: { document: { type: "object", description: "The GenUI document." } },
      required: ["document"],
      additionalProperties: false,
    },
  },
];

const ok = (text: string): ToolOutcome => {
  const truncated = text.length > TOOL_RESULT_MAX_CHARS;
  return { ok: true, text: truncated ? text.slice(0, TOOL_RESULT_MAX_CHARS) : text, truncated };
};
const fail = (error: string): ToolOutcome => ({ ok: false, error });

const strip = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

export class BuiltinTools implements ToolSource {
  constructor(private readonly deps: BuiltinToolsDeps) {}

  tools(): CallableTool[] {
    return TOOLS.filter((t) => {
      if (t.name === "remember" || t.name === "forget") return Boolean(this.deps.memory);
      if (t.name === "show_ui") return Boolean(this.deps.genui);
      return true;
    });
  }

  call(tool: CallableTool, args: unknown, signal: AbortSignal): Promise<ToolOutcome> {
    if (signal.aborted) return Promise.resolve(fail("The call was cancelled."));
    try {
      return Promise.resolve(this.run(tool.name, strip(args)));
    } catch (err) {
      // The memory service's own checks (empty, too long) come back as the tool's error.
      return Promise.resolve(fail(err instanceof Error ? err.message : String(err)));
    }
  }

  private run(name: string, args: Record<string, unknown>): ToolOutcome {
    switch (name) {
      case "search_conversations":
        return this.search(typeof args.query === "string" ? args.query : "");
      case "remember":
        return this.remember(typeof args.text === "string" ? args.text : "");
      case "forget":
        return this.forget(args);
      case "show_ui":
        return this.showUi(args.document);
      default:
        return fail(`There is no built-in tool named "${name}".`);
    }
  }

  private search(query: string): ToolOutcome {
    const current = answerContext.getStore()?.conversationId;
    const hits = this.deps.search
      .search(query, SEARCH_LIMIT + 1)
      .filter((h) => h.conversationId !== current)
      .slice(0, SEARCH_LIMIT)
      .map((h) => ({
        conversation: h.conversationTitle,
        conversationId: h.conversationId,
        role: h.role,
        text: h.snippet.map((p) => p.text).join(""),
        at: new Date(h.createdAt).toISOString(),
      }));
    // The query is not echoed: the model wrote it, a result should hold only what was found.
    return ok(hits.length === 0 ? "No conversation matches the query." : JSON.stringify(hits));
  }

  private remember(text: string): ToolOutcome {
    const memory = this.deps.memory!;
    const created = memory.create(text);
    return ok(JSON.stringify({ remembered: created.text, id: created.id }));
  }

  private forget(args: Record<string, unknown>): ToolOutcome {
    const memory = this.deps.memory!;
    const id = typeof args.id === "string" ? args.id : null;
    const text = typeof args.text === "string" ? args.text.trim().toLowerCase() : null;
    if (!id && !text) return fail("Give the id or the text of the memory to forget.");
    let target: Memory | undefined;
    const all = memory.list();
    if (id) target = all.find((m) => m.id === id);
    if (!target && text) {
      target = all.find((m) => m.text.toLowerCase() === text);
      if (!target) {
        const partial = all.filter((m) => m.text.toLowerCase().includes(text));
        if (partial.length > 1)
          return fail(`${partial.length} memories contain "${text}"; give the id of the one to forget.`);
        target = partial[0];
      }
    }
    if (!target || !memory.delete(target.id)) return fail("No such memory.");
    return ok(JSON.stringify({ forgotten: target.text, id: target.id }));
  }

  private showUi(document: unknown): ToolOutcome {
    const answer = answerContext.getStore();
    if (!answer) return fail("show_ui can only be used while answering in a conversation.");
    const checked = validateDocument(document);
    if (!checked.ok) return fail(checked.reason);
    if (checked.document.blocks.length === 0) return fail("The document has no usable block.");
    const genui = this.deps.genui!;
    genui.markUiAnswer(answer.messageId);
    genui.saveDocument(answer.messageId, checked.document);
    const problems = checked.issues.map((i) => `${i.id}: ${i.reason}`);
    return ok(
      problems.length === 0
        ? "Shown to the user."
        : `Shown to the user, with problems: ${problems.join("; ")}`,
    );
  }
}
