import {
  ChatMLChatWrapper,
  GeneralChatWrapper,
  resolveChatWrapper,
  type ChatWrapper,
  type LlamaModel,
  type Token,
  type Tokenizer,
} from "node-llama-cpp";

/**
 * The chat format of `model`: node-llama-cpp's wrapper for its template, else ChatML. Shared by
 * inference (ModelSession) and training (cloud/training), so both lay a conversation out in the
 * very same tokens. Resolving costs 0.25–0.5 s of CPU (ARCHITECTURE.md): call it once per model.
 *
 * It is node-llama-cpp's `resolveChatWrapper(model)` with the same options, but the tokenizer
 * it hands over remembers its answers while the resolution runs: the resolution renders the
 * template against every wrapper that may match and tokenizes the renderings to compare them,
 * ~2,700 native tokenizations of ~60 distinct texts for a ChatML template, a third of its time
 * (bench/README.md, "parallel"). A tokenization depends only on its text and flags, so the
 * wrapper chosen is the same.
 */
export function chooseChatWrapper(model: LlamaModel): ChatWrapper {
  const tokenizer = rememberingTokenizer(model.tokenizer);
  try {
    return (
      resolveChatWrapper({
        bosString: model.tokens.bosString,
        architecture: model.fileInfo?.metadata?.general?.architecture,
        filename: model.filename,
        fileInfo: model.fileInfo,
        tokenizer: tokenizer.tokenize,
        llama: model.llama,
      }) ?? new GeneralChatWrapper()
    );
  } catch {
    // A model without a usable template still gets a sensible chat format.
    return new ChatMLChatWrapper();
  } finally {
    // A Jinja template's wrapper keeps the tokenizer: from now on it tokenizes each time.
    tokenizer.forget();
  }
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
