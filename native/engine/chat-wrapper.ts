import {
  ChatMLChatWrapper,
  GeneralChatWrapper,
  resolveChatWrapper,
  specializedChatWrapperTypeNames,
  type ChatWrapper,
  type LlamaModel,
  type SpecializedChatWrapperTypeName,
  type Token,
  type Tokenizer,
} from "node-llama-cpp";

/**
 * The chat format of `model`: node-llama-cpp's wrapper for its template, else ChatML. Shared by
 * inference (ModelSession) and training (cloud/training), so both lay a conversation out in the
 * very same tokens. Resolving costs 0.05–0.5 s of CPU (ARCHITECTURE.md): call it once per model.
 *
 * It is node-llama-cpp's `resolveChatWrapper(model)` with the same options, but the tokenizer
 * it hands over remembers its answers while the resolution runs: the resolution renders the
 * template against every wrapper that may match and tokenizes the renderings to compare them,
 * ~2,700 native tokenizations of ~60 distinct texts for a ChatML template, a third of its time
 * (bench/README.md, "parallel"). A tokenization depends only on its text and flags, so the
 * wrapper chosen is the same. The model's name it is handed may be a hint (templateHint).
 */
export function chooseChatWrapper(model: LlamaModel): ChatWrapper {
  const tokenizer = rememberingTokenizer(model.tokenizer);
  const resolve = (fileInfo: LlamaModel["fileInfo"], fallback: boolean) =>
    resolveChatWrapper({
      bosString: model.tokens.bosString,
      architecture: model.fileInfo?.metadata?.general?.architecture,
      filename: model.filename,
      fileInfo,
      tokenizer: tokenizer.tokenize,
      llama: model.llama,
      fallbackToOtherWrappersOnJinjaError: fallback,
    }) ?? new GeneralChatWrapper();
  try {
    const hinted = hintedFileInfo(model);
    if (hinted) {
      // Only where the template itself works: a broken one falls back on the model's names (and
      // would meet the hint there), so it is resolved again without the hint, as it was.
      try {
        return resolve(hinted, false);
      } catch {
        // resolved below
      }
    }
    return resolve(model.fileInfo, true);
  } catch {
    // A model without a usable template still gets a sensible chat format.
    return new ChatMLChatWrapper();
  } finally {
    // A Jinja template's wrapper keeps the tokenizer: from now on it tokenizes each time.
    tokenizer.forget();
  }
}

/** `model`'s file info with templateHint's wrapper as the model's name, or null (no hint). */
function hintedFileInfo(model: LlamaModel): LlamaModel["fileInfo"] | null {
  const hint = templateHint(model);
  if (hint === null || !model.fileInfo) return null;
  return {
    ...model.fileInfo,
    metadata: {
      ...model.fileInfo.metadata,
      general: { ...model.fileInfo.metadata?.general, name: hint },
    },
  };
}

/**
 * `tokenizer`, remembering each text's tokens until `forget()` (then it passes every call
 * through). Each call gets its own copy of the tokens, so a caller that changes them changes
 * nothing for the next.
 */
export function rememberingTokenizer(tokenizer: Tokenizer): { tokenize: Tokenizer; forget(): void } {
  let known: Map<string, readonly Token[]> | null = new Map();
  const tokenize = ((text: string, specialTokens?: boolean | "builtin", options?: "trimLeadingSpace") => {
    const call = () =>
      (tokenizer as (t: string, s?: boolean | "builtin", o?: "trimLeadingSpace") => Token[])(
        text,
        specialTokens,
        options,
      );
    if (known === null) return call();
    const key = `${String(specialTokens)}\u0000${String(options)}\u0000${text}`;
    let tokens = known.get(key);
    if (tokens === undefined) {
      tokens = call();
      known.set(key, tokens.slice());
    }
    return tokens.slice();
  }) as Tokenizer & { detokenize: Tokenizer["detokenize"] };
  Object.assign(tokenize, {
    detokenize: tokenizer.detokenize,
    isSpecialToken: (token: Token) => tokenizer.isSpecialToken(token),
    isEogToken: (token: Token) => tokenizer.isEogToken(token),
  });
  return {
    tokenize,
    forget: () => {
      known = null;
    },
  };
}

/**
 * Template markers, and the wrapper node-llama-cpp's own fallback takes for each when no
 * wrapper matched the template (resolveChatWrapper, after getModelLinageNames). Only markers
 * that no wrapper before that one in node-llama-cpp's fixed order lays out: moving it first
 * cannot pass over an earlier wrapper that would also match (Qwen's, before ChatML, matches
 * only a template with its tool-call format, which ChatML's does not lay out). Llama 3's header
 * markers are left out: three wrappers share them, and they come early in the order anyway.
 */
const TEMPLATE_MARKERS: readonly [(template: string) => boolean, SpecializedChatWrapperTypeName][] = [
  [(t) => t.includes("<seed:think>") || (t.includes("<seed:bos>") && t.includes("<seed:eos>")), "seed"],
  [(t) => t.includes("<|start|>") && t.includes("<|channel|>"), "harmony"],
  [(t) => t.includes("<|turn>") && t.includes("<|tool_call>call:"), "gemma4"],
  [(t) => t.includes("<|im_start|>"), "chatML"],
  [(t) => t.includes("[INST]"), "llama2Chat"],
  [(t) => t.includes("<start_of_turn>"), "gemma"],
];

/** Texts node-llama-cpp also ranks wrappers by (its specializedChatWrapperRelatedTexts). */
const RELATED_TEXTS = ["gpt", "gpt-oss", "muse", "gemma 4", "gemma-4"];

/**
 * The wrapper to try first for `model`'s template, or null. node-llama-cpp tries the wrappers
 * that may match a template in an order ranked by the model's name and file name, each costing
 * ~50 ms of Jinja rendering; a name that names none (the demo model, many fine-tunes) leaves its
 * fixed order, where ChatML comes eleventh. Only then is the wrapper its own template markers
 * point to ranked first, by handing it over as the model's name; the others follow in their
 * order. The one chosen is still the first that node-llama-cpp's check finds equivalent to the
 * template (two equivalent wrappers lay out every conversation it checks the same way). A
 * template that fails node-llama-cpp's own sanity test is resolved without the hint
 * (chooseChatWrapper): its fallback goes by the model's names before the markers.
 */
export function templateHint(model: LlamaModel): SpecializedChatWrapperTypeName | null {
  const template = model.fileInfo?.metadata?.tokenizer?.chat_template;
  if (typeof template !== "string" || template.trim() === "") return null;
  const names = [model.fileInfo.metadata.general?.name, model.filename]
    .filter((text): text is string => typeof text === "string")
    .map((text) => text.toLowerCase());
  const ranked = [...specializedChatWrapperTypeNames, ...RELATED_TEXTS].some((wrapper) =>
    names.some((name) => name.includes(wrapper.toLowerCase())),
  );
  if (ranked) return null;
  return TEMPLATE_MARKERS.find(([marks]) => marks(template))?.[1] ?? null;
}
