import { ApiError } from "../../api";
import { NO_MODEL_MESSAGE } from "../chat/turn-pipeline";
import { NO_TOKENS } from "../engine/supervisor";
import type { ChatTurn, EngineClient, KvPolicy } from "../engine/types";
import { notInstalled, type AdapterRegistry } from "./adapter-registry";

export interface AdapterCompareDeps {
  /** The EngineQueue: compare waits its turn like any generation. */
  engine: EngineClient;
  registry: AdapterRegistry;
  systemPrompt: string;
  kvPolicy: () => KvPolicy;
}

export const COMPARE_DEFAULT_MAX_TOKENS = 64;

/**
 * Answer `prompt` greedily with the base model alone, then with the adapter at its scale, for
 * a side-by-side view. Stateless: nothing is stored. Throws no_model, not_found, or
 * invalid_input when the adapter does not fit the loaded model.
 */
export async function compareAdapter(
  deps: AdapterCompareDeps,
  input: { adapterId: string; prompt: string; maxTokens?: number },
): Promise<{ base: string; adapter: string }> {
  if (!deps.engine.loaded) throw new ApiError("no_model", NO_MODEL_MESSAGE);
  const adapter = deps.registry.get(input.adapterId);
  if (!adapter) throw notInstalled(input.adapterId);
  const fit = await deps.registry.fitOf(adapter);
  if (fit.fits === false) {
    throw new ApiError(
      "invalid_input",
      `Adapter "${adapter.id}" cannot be used with the loaded model: ${fit.reason ?? ""}`,
    );
  }
  const history: ChatTurn[] = [];
  if (deps.systemPrompt) history.push({ role: "system", text: deps.systemPrompt });
  history.push({ role: "user", text: input.prompt });
  const common = {
    temperature: 0,
    maxTokens: input.maxTokens ?? COMPARE_DEFAULT_MAX_TOKENS,
    kvPolicy: deps.kvPolicy(),
  };
  // Only the whole texts are compared: no tokens streamed.
  const ignore = NO_TOKENS;
  const base = await deps.engine.generate(history, { ...common, adapters: [] }, ignore);
  const withAdapter = await deps.engine.generate(
    history,
    { ...common, adapters: [{ path: adapter.filePath, scale: adapter.scale }] },
    ignore,
  );
  return { base: base.text, adapter: withAdapter.text };
}
