import type { Message } from "../../../electron/api";

/** Every loaded conversation's messages, keyed by conversation id (the store's chat data). */
export type MessagesByConversation = Readonly<Record<string, readonly Message[]>>;
