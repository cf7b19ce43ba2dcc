/** The model ids /v1 offers: the loaded base model (by file name) and `auto` (the adapter router). */
import { stat } from "node:fs/promises";
import { basename } from "node:path";
import type { EngineClient } from "../../core/engine/types";

export const AUTO_MODEL_ID = "auto";

export interface OpenAiModel {
  id: string;
  object: "model";
  created: number;
  owned_by: "macaron";
}

/** `models/Qwen3-0.6B-Q8_0.gguf` → `Qwen3-0.6B-Q8_0`. */
export function modelIdFromPath(path: string): string {
  return basename(path).replace(/\.gguf$/i, "");
}

export async function listModels(engine: EngineClient, now: () => number = Date.now): Promise<OpenAiModel[]> {
  const loaded = engine.loaded;
  const nowSec = Math.floor(now() / 1000);
  const models: OpenAiModel[] = [];
  if (loaded) {
    // The file's age is the most truthful "created" a local model has.
    const created = await stat(loaded.path).then(
      (s) => Math.floor(s.mtimeMs / 1000),
      () => nowSec,
    );
    models.push({ id: modelIdFromPath(loaded.path), object: "model", created, owned_by: "macaron" });
  }
  models.push({ id: AUTO_MODEL_ID, object: "model", created: nowSec, owned_by: "macaron" });
  return models;
}

/** Whether `requested` names what is loaded: its id, its file name, or `auto`. */
export function modelMatches(requested: string, loadedPath: string): boolean {
  return (
    requested === AUTO_MODEL_ID ||
    requested === modelIdFromPath(loadedPath) ||
    requested === basename(loadedPath)
  );
}
