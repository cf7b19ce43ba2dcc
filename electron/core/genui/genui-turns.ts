import type { MessageInteraction, NodeIssue, UiDocument, UiNode } from "../../api/genui";
import {
  CATALOG_VERSION,
  PartialJson,
  completedPart,
  documentText,
  grammarJsonSchema,
  validateDocument,
} from "../../api/genui";
import type { RoutingInfo } from "../../api";
import { uiSystemPrompt } from "../../../common/prompts";
import type { GenuiStore } from "./genui-store";

export type AnswerFormat = "text" | "ui";

export interface GenuiTurnsDeps {
  store: GenuiStore;
  /** Whether an installed adapter is the UI specialist (its domain is "ui"). */
  isUiAdapter: (adapterId: string) => boolean;
}

/** A UI answer as it is stored when its generation ends. */
export interface FinishedUiAnswer {
  /** Text rendition (search, copy, export, the next prompt), or the raw text when unusable. */
  content: string;
  document: UiDocument;
  issues: NodeIssue[];
}

function inert(id: string, reason: string): UiNode {
  return { type: "Invalid", id, props: { reason, originalType: null } };
}

/**
 * The chat pipeline's GenUI hooks: which turns answer in UI mode, the prompt and grammar of such
 * a turn, and turning its streamed JSON into a validated document when it ends. The pipeline
 * calls these inside its own transactions.
 */
export class GenuiTurns {
  /** node-llama-cpp grammar schema of the catalog (computed once; see json-schema.ts). */
  readonly jsonSchema: Record<string, unknown> = grammarJsonSchema();

  constructor(private readonly deps: GenuiTurnsDeps) {}

  /**
   * "ui" when the user asked for it, or when nobody said "text" and the router (or a pin) put
   * the UI adapter first.
   */
  formatFor(requested: AnswerFormat | undefined, routing: RoutingInfo): AnswerFormat {
    if (requested) return requested;
    const lead = routing.adapters[0];
    return lead && this.deps.isUiAdapter(lead.id) ? "ui" : "text";
  }

  systemPrompt(base: string): string {
    return uiSystemPrompt(base);
  }

  /** The answer `messageId` is a UI answer (message format + catalog version on its turn). */
  markAnswer(messageId: string): void {
    this.deps.store.markUiAnswer(messageId);
  }

  saveInteraction(userMessageId: string, interaction: MessageInteraction): void {
    this.deps.store.saveInteraction(userMessageId, interaction);
  }

  /**
   * Turn the streamed JSON into the stored document: parsed incrementally (so an answer cut
   * off by the token limit or Stop keeps its complete components), validated node by node.
   * Nothing usable gives a document with one inert node saying why; never throws.
   */
  finishAnswer(messageId: string, text: string, cutOff: boolean): FinishedUiAnswer {
    const parser = new PartialJson();
    parser.push(text);
    const raw = parser.done ? parser.root : completedPart(parser);
    const checked = validateDocument(raw);
    let document: UiDocument;
    let issues: NodeIssue[];
    if (!checked.ok || checked.document.blocks.length === 0) {
      const reason = !checked.ok
        ? checked.reason
        : parser.error
          ? `The answer is not valid JSON (${parser.error}).`
          : "The answer ended before any component was complete.";
      document = { version: CATALOG_VERSION, blocks: [{ kind: "ui", root: inert("~answer", reason) }] };
      issues = [{ id: "~answer", reason }];
      this.deps.store.saveDocument(messageId, document);
      return { content: text, document, issues };
    }
    document = checked.document;
    issues = checked.issues;
    if (!parser.done || cutOff) {
      const reason = parser.error
        ? `The rest of the answer is not valid JSON (${parser.error}).`
        : "The answer ended before the rest was complete.";
      document = {
        ...document,
        blocks: [...document.blocks, { kind: "ui", root: inert("~cut-off", reason) }],
      };
      issues = [...issues, { id: "~cut-off", reason }];
    }
    this.deps.store.saveDocument(messageId, document);
    return { content: documentText(document), document, issues };
  }
}
