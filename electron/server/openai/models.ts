/**
 * The model ids /v1 offers: the loaded base model (by file name), every installed enabled
 * adapter (by id: that adapter pinned on the base), and `auto` (the adapter router).
 */
import { stat } from "node:fs/promises";
import { basename } from "node:path";
import type { FastifyRequest } from "fastify";
import type { AdapterInfo, AdapterSelection } from "../../api";
import type { Core } from "../../core/core-types";

export const AUTO_MODEL_ID = "auto";

export interface OpenAiModel {
  id: string;
  object: "model";
  created: number;
  owned_by: "macaron";
  /** Non-standard, adapters only: what the adapter is for, and which version is installed. */
  domain?: string;
  version?: string;
  name?: string;
}

/** `models/Qwen3-0.6B-Q8_0.gguf` → `Qwen3-0.6B-Q8_0`. */
export function modelIdFromPath(path: string): string {
  return basename(path).replace(/\.gguf$/i, "");
}

export async function listModels(core: Core, now: () => number = Date.now): Promise<OpenAiModel[]> {
  const loaded = core.generation.loaded;
  const nowSec = Math.floor(now() / 1000);
  const models: OpenAiModel[] = [];
  if (loaded) {
    // The file's age is the most truthful "created" a local model has.
    const created = await stat(loaded.path).then(
      (s) => Math.floor(s.mtimeMs / 1000),
      () => nowSec,
    );
    models.push({ id: modelIdFromPath(loaded.path), object: "model", created, owned_by: "macaron" });
    for (const adapter of await core.adapters.listEnabled()) {
      // One made for another base cannot answer; asking for it gets misfitMessage's reason.
      if (adapter.fitsLoadedModel !== false) models.push(adapterModel(adapter));
    }
  }
  models.push({ id: AUTO_MODEL_ID, object: "model", created: nowSec, owned_by: "macaron" });
  return models;
}

function adapterModel(a: AdapterInfo): OpenAiModel {
  return {
    id: a.id,
    object: "model",
    created: Math.floor(a.installedAt / 1000),
    owned_by: "macaron",
    domain: a.domain,
    version: a.version,
    name: a.name,
  };
}

/**
 * What `requested` asks for: the base alone (its id or file name), an installed enabled
 * adapter pinned, or the router (`auto`). Null for anything else (404 model_not_found).
 */
export function selectionForModel(
  requested: string,
  loadedPath: string,
  adapterIds: ReadonlySet<string>,
): AdapterSelection | null {
  if (requested === AUTO_MODEL_ID) return "auto";
  if (requested === modelIdFromPath(loadedPath) || requested === basename(loadedPath)) return "base";
  if (adapterIds.has(requested)) return { pinned: requested };
  return null;
}

/**
 * Why `requested` cannot answer when it names an installed, enabled adapter that does not fit
 * the loaded base; null otherwise. Without it such a request read "The model 'chat' does not
 * exist", which sends the user looking for an adapter that is right there in the list.
 */
export function misfitMessage(
  requested: string,
  enabled: readonly AdapterInfo[],
  loadedPath: string,
): string | null {
  const adapter = enabled.find((a) => a.id === requested && a.fitsLoadedModel === false);
  if (!adapter) return null;
  const madeFor = adapter.base.baseName ? ` (made for "${adapter.base.baseName}")` : "";
  const reason = adapter.incompatibleReason ? ` ${adapter.incompatibleReason}` : "";
  return (
    `The adapter '${adapter.id}'${madeFor} was made for another base model and does not fit ` +
    `the loaded one, '${modelIdFromPath(loadedPath)}'. Load the base it was trained on, or pick ` +
    `another model from GET /v1/models.${reason}`
  );
}

/** Anthropic's SDKs send `anthropic-version` with every request; OpenAI's never do. */
export function isAnthropicClient(request: FastifyRequest): boolean {
  return request.headers["anthropic-version"] !== undefined;
}

/** A model as Anthropic's Models API describes one (`models.list`, `models.retrieve`). */
export function anthropicModel(model: OpenAiModel) {
  return {
    type: "model" as const,
    id: model.id,
    display_name: model.name ?? model.id,
    created_at: new Date(model.created * 1000).toISOString(),
  };
}
