import { ChatMLChatWrapper, resolveChatWrapper, type ChatWrapper, type LlamaModel } from "node-llama-cpp";

/**
 * The chat format of `model`: node-llama-cpp's wrapper for its template, else ChatML. Shared by
 * inference (ModelSession) and training (cloud/training), so both lay a conversation out in the
 * very same tokens. Resolving costs 0.5–1 s of CPU (ARCHITECTURE.md): call it once per model.
 */
export function chooseChatWrapper(model: LlamaModel): ChatWrapper {
  try {
    return resolveChatWrapper(model);
  } catch {
    // A model without a usable template still gets a sensible chat format.
    return new ChatMLChatWrapper();
  }
}
