import { ApiError } from "../../api";
import type { AdapterRouting } from "../adapters/adapter-routing";
import type { TurnPipeline } from "../chat/turn-pipeline";
import type { EventBus } from "../events/event-bus";
import type { DomainHandlers } from "../handlers";
import type { MemoryService } from "../memory/memory-service";
import type { ConversationSearch } from "./conversation-search";
import { checkMaxTokens, type ConversationSettingsStore } from "./conversation-settings";
import type { ConversationStore } from "./conversation-store";
import type { ConversationTransfer } from "./conversation-transfer";
import type { MessageStore } from "./message-store";

export interface ConversationHandlerDeps {
  conversations: ConversationStore;
  messages: MessageStore;
  pipeline: TurnPipeline;
  events: EventBus;
  /** Validates pins and learns from them; without it only "auto" and "base" can be set. */
  routing?: AdapterRouting;
  search: ConversationSearch;
  transfer: ConversationTransfer;
  memory: MemoryService;
  /** Per-conversation system prompt and sampling (issue 13). */
  settings: ConversationSettingsStore;
  /** The loaded model's context size (null: none loaded): max tokens must fit in it. */
  contextSize: () => number | null;
  /** Drops the deleted conversation's KV cache (live and saved files: they hold its tokens). */
  forgetCache?: (conversationId: string) => Promise<void>;
  /** After a conversation was pinned to an adapter (core records the router override as feedback). */
  onPinned?: (conversationId: string, adapterId: string) => void;
}

const notFound = (): ApiError =>
  new ApiError("not_found", "This conversation does not exist (it may have been deleted).");

export function conversationHandlers(deps: ConversationHandlerDeps): DomainHandlers<"conversations"> {
  const {
    conversations,
    messages,
    pipeline,
    events,
    routing,
    search,
    transfer,
    memory,
    forgetCache,
    onPinned,
    settings,
    contextSize,
  } = deps;
  return {
    "conversations.list": ({ query }) => conversations.list(query),
    "conversations.search": ({ query, limit }) => search.search(query, limit),
    "conversations.export": ({ id }) => transfer.export(id),
    "conversations.import": ({ json }) => {
      const { conversationIds, ...counts } = transfer.import(json);
      for (const id of conversationIds) {
        const conversation = conversations.get(id);
        if (conversation) events.emit("conversations.changed", { conversation, deletedId: null });
      }
      if (counts.memories > 0) memory.emitChanged();
      return counts;
    },
    "conversations.create": ({ title }) => {
      const conversation = conversations.create(title);
      events.emit("conversations.changed", { conversation, deletedId: null });
      return conversation;
    },
    "conversations.get": ({ id }) => {
      const conversation = conversations.get(id);
      if (!conversation) throw notFound();
      return { conversation, messages: messages.list(id) };
    },
    "conversations.rename": ({ id, title }) => {
      const clean = title.replace(/\s+/g, " ").trim();
      if (!clean) throw new ApiError("invalid_input", "The title cannot be empty.");
      const conversation = conversations.rename(id, clean);
      if (!conversation) throw notFound();
      events.emit("conversations.changed", { conversation, deletedId: null });
      return conversation;
    },
    "conversations.setAdapters": async ({ id, adapters }) => {
      if (!conversations.get(id)) throw notFound();
      if (typeof adapters === "object") {
        if (!routing) throw new ApiError("invalid_input", "No adapters are installed.");
        await routing.validate(adapters);
      }
      const conversation = conversations.setAdapters(id, adapters);
      if (!conversation) throw notFound();
      if (routing && typeof adapters === "object" && "pinned" in adapters) {
        // Pinning after a turn says which adapter that turn should have had: teach the router.
        const lastUser = messages
          .list(id)
          .filter((m) => m.role === "user")
          .at(-1);
        if (lastUser) routing.recordOverride(lastUser.content, adapters.pinned);
      }
      if (typeof adapters === "object" && "pinned" in adapters) onPinned?.(id, adapters.pinned);
      events.emit("conversations.changed", { conversation, deletedId: null });
      return conversation;
    },
    "conversations.getSettings": ({ id }) => {
      if (!conversations.get(id)) throw notFound();
      return settings.get(id);
    },
    "conversations.setSettings": ({ id, systemPrompt, sampling }) => {
      if (!conversations.get(id)) throw notFound();
      checkMaxTokens(sampling, contextSize());
      return settings.set(id, { systemPrompt, sampling });
    },
    "conversations.delete": async ({ id, deleteMemories }) => {
      // Stop its answer first; the pipeline then finds the message gone and reports nothing.
      pipeline.stop(id);
      // Otherwise its memories stay, no longer linked to it (conversation_id becomes NULL).
      if (deleteMemories && conversations.get(id)) memory.deleteFromConversation(id);
      const deleted = conversations.delete(id);
      if (deleted) events.emit("conversations.changed", { conversation: null, deletedId: id });
      await forgetCache?.(id);
      return { deleted };
    },
  };
}
