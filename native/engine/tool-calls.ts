import type {
  ChatHistoryItem,
  ChatModelFunctions,
  ChatWrapper,
  ChatWrapperGenerateContextStateOptions,
  ChatWrapperGeneratedContextState,
  ChatWrapperSettings,
  LlamaChatResponse,
} from "node-llama-cpp";
import type { ToolCallFormat, ToolCallOut, ToolChoice, ToolDefinition } from "../../common/engine-protocol";
import { optionConflicts } from "../../common/generate-rules";
import { toGrammarSchema, ToolRequestError } from "../../common/grammar-schema";
import { renderToolDocs } from "./tool-docs";

export { ToolRequestError } from "../../common/grammar-schema";

/**
 * The functions node-llama-cpp offers the model for `tools` under `choice`: each with its
 * description and its parameters as a grammar schema (so the name and the arguments are
 * grammar-constrained). A named choice offers only that tool. Throws ToolRequestError.
 */
export function toFunctions(
  tools: readonly ToolDefinition[],
  choice: ToolChoice = "auto",
): ChatModelFunctions {
  const conflict = optionConflicts({ tools: [...tools], toolChoice: choice })[0];
  if (conflict) throw new ToolRequestError(conflict.message);
  const offered = typeof choice === "object" ? tools.filter((t) => t.name === choice.name) : tools;
  const functions: Record<string, ChatModelFunctions[string]> = {};
  for (const tool of offered) {
    functions[tool.name] = {
      ...(tool.description ? { description: tool.description } : {}),
      ...(tool.parameters
        ? { params: toGrammarSchema(tool.parameters, `tools.${tool.name}.parameters`) }
        : {}),
    };
  }
  return functions;
}

/** Whether `choice` makes the answer a call from its first token. */
export function isForced(choice: ToolChoice | undefined): boolean {
  return choice !== undefined && choice !== "auto";
}

/** node-llama-cpp's function-calling settings for an adapter's own call syntax. */
export function formatSettings(format: ToolCallFormat): ChatWrapperSettings["functions"] {
  return {
    call: {
      optionalPrefixSpace: true,
      prefix: format.callPrefix,
      paramsPrefix: format.paramsPrefix,
      suffix: format.callSuffix,
      // A tool without parameters still writes valid JSON in formats like the demo Agent's.
      emptyCallParamsPlaceholder: {},
    },
    result: { prefix: format.resultPrefix, suffix: format.resultSuffix },
    // No parallelism section: one call per answer, as such adapters are trained.
  };
}

export interface ToolWrapperOptions {
  /** The adapter's call syntax instead of the wrapper's. */
  format?: ToolCallFormat;
  /** The answer is a call from its first token ("required" or a named choice). */
  forced: boolean;
  /**
   * The functions the system prompt documents, when they differ from those offered: a named
   * choice offers one function to the grammar but documents all the tools, so the prompt is the
   * same as under "auto" and the conversation's KV cache stays reusable from turn to turn.
   */
  documentedFunctions?: ChatModelFunctions;
}

/**
 * `base` adjusted for a tool turn, or `base` itself when nothing changes. The result inherits
 * everything from `base` (its template, segments, special tokens) through the prototype chain,
 * so the same wrapper instance keeps its state and only what is overridden differs:
 * - `format`: `settings.functions` become the adapter's syntax (how calls are detected,
 *   injected and laid out in the history); with `documented` false no function documentation
 *   is added to the system prompt (the adapter learned its tools and format without one); with
 *   `documented` "compact" the short one of tool-docs.ts (the demo Agent's, trained on it).
 * - `forced`: the context state says function calling is engaged from the start
 *   (`functionCall.initiallyEngaged`, as node-llama-cpp's FunctionaryChatWrapper does), so
 *   LlamaChat injects the call prefix and grammar-constrains the function name right away.
 */
export function toolChatWrapper(base: ChatWrapper, options: ToolWrapperOptions): ChatWrapper {
  if (!options.format && !options.forced && !options.documentedFunctions) return base;
  const wrapper = Object.create(base) as ChatWrapper;
  const { format, documentedFunctions } = options;
  if (format) {
    const settings: ChatWrapperSettings = { ...base.settings, functions: formatSettings(format) };
    Object.defineProperty(wrapper, "settings", { value: settings, enumerable: true });
  }
  if (format && !format.documented) {
    Object.defineProperty(wrapper, "addAvailableFunctionsSystemMessageToHistory", {
      value: (history: ReturnType<ChatWrapper["addAvailableFunctionsSystemMessageToHistory"]>) => history,
    });
  } else if (format?.documented === "compact") {
    Object.defineProperty(wrapper, "addAvailableFunctionsSystemMessageToHistory", {
      value: (
        ...[history, available]: Parameters<ChatWrapper["addAvailableFunctionsSystemMessageToHistory"]>
      ) => withCompactDocs(history, documentedFunctions ?? available),
    });
  } else if (documentedFunctions) {
    Object.defineProperty(wrapper, "addAvailableFunctionsSystemMessageToHistory", {
      value(
        this: ChatWrapper,
        ...[history, , documentation]: Parameters<ChatWrapper["addAvailableFunctionsSystemMessageToHistory"]>
      ) {
        return base.addAvailableFunctionsSystemMessageToHistory.call(
          this,
          history,
          documentedFunctions,
          documentation,
        );
      },
    });
  }
  if (options.forced) {
    Object.defineProperty(wrapper, "generateContextState", {
      value(
        this: ChatWrapper,
        state: ChatWrapperGenerateContextStateOptions,
      ): ChatWrapperGeneratedContextState {
        // The base wrapper's own method, called with the derived `this` (its overrides apply).
        const generated = base.generateContextState.call(this, state);
        // LlamaChat reads every field of the state at run time; the type keeps engaged calls and
        // prefix triggers apart only because no wrapper of its own returns both.
        return {
          ...generated,
          functionCall: { initiallyEngaged: true, disengageInitiallyEngaged: [] },
        } as ChatWrapperGeneratedContextState;
      },
    });
  }
  return wrapper;
}

/**
 * `history` with the compact documentation of `functions` (tool-docs.ts) as a system message
 * before the first non-system one, where node-llama-cpp puts its own: ChatML joins it to the
 * system prompt after a blank line.
 */
export function withCompactDocs(
  history: readonly ChatHistoryItem[],
  functions: ChatModelFunctions | undefined,
): ChatHistoryItem[] {
  const docs = renderToolDocs(functions);
  if (!docs) return [...history];
  const out = [...history];
  const at = out.findIndex((item) => item.type !== "system");
  out.splice(at < 0 ? out.length : at, 0, { type: "system", text: docs });
  return out;
}

/** The calls of a response, arguments parsed (a call without parameters gets `{}`). */
export function toToolCalls(response: LlamaChatResponse<ChatModelFunctions>): ToolCallOut[] {
  return (response.functionCalls ?? []).map((call) => ({
    name: call.functionName,
    arguments: call.params === undefined ? {} : finiteNumbers(call.params),
  }));
}

/**
 * `value` with every non-finite number (JSON's grammar lets a model write `1e999`, which parses
 * as Infinity) replaced by its text: JSON Schema validators count Infinity as an integer and
 * JSON would send it as null, whereas a string where a number belongs fails the tool's schema
 * check with a reason.
 */
export function finiteNumbers(value: unknown): unknown {
  if (typeof value === "number") return Number.isFinite(value) ? value : String(value);
  if (Array.isArray(value)) return value.map(finiteNumbers);
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, finiteNumbers(v)]));
  return value;
}

/**
 * Follows a generation's calls as node-llama-cpp reports them, for the one case where it throws
 * instead of returning them: arguments the grammar let through but its own check refuses (an
 * integer written `1e-5`, which the JSON grammar allows). The call is then still returned,
 * its arguments parsed as written, so that the caller's check against the tool's schema
 * (electron/core/tools/argument-check.ts) rejects it with a reason and nothing runs — rather
 * than the whole answer failing.
 */
export class CallRecorder {
  private readonly completed: ToolCallOut[] = [];
  private readonly params = new Map<number, { name: string; text: string; done: boolean }>();

  readonly onFunctionCall = (call: { functionName: string; params: unknown }): void => {
    const args = call.params === undefined ? {} : finiteNumbers(call.params);
    this.completed.push({ name: call.functionName, arguments: args });
  };

  readonly onFunctionCallParamsChunk = (chunk: {
    callIndex: number;
    functionName: string;
    paramsChunk: string;
    done: boolean;
  }): void => {
    const entry = this.params.get(chunk.callIndex) ?? { name: chunk.functionName, text: "", done: false };
    entry.text += chunk.paramsChunk;
    entry.done ||= chunk.done;
    this.params.set(chunk.callIndex, entry);
  };

  /** The call whose arguments were still being written when the generation stopped; null if none. */
  cutOffCall(): { name: string; arguments: string } | null {
    const last = this.params.get(this.completed.length);
    if (!last || last.done) return null;
    return { name: last.name, arguments: last.text };
  }

  /** The calls made, ending with one whose arguments node-llama-cpp refused; null if there is none. */
  refusedCalls(): ToolCallOut[] | null {
    const last = this.params.get(this.completed.length);
    if (!last?.done) return null;
    let args: unknown;
    try {
      args = JSON.parse(last.text.trim());
    } catch {
      return null;
    }
    return [...this.completed, { name: last.name, arguments: finiteNumbers(args) }];
  }
}
