/**
 * A stand-in for the training pipeline, for the end-to-end loop test and the bench: reads the
 * exported coding dataset from the cloud service, "trains" by writing adapter files with
 * native/gguf, and publishes them to the registry.
 * - v2 (passes the contract): the coding adapter with its LoRA B scaled (a different but still
 *   decisive logit boost), lineage parent 1.0.0, trainedFrom the export's sha256.
 * - v3 (built to regress): named coding, but built from the UI adapter: it answers "uuuu".
 * Run: tsx cloud/testing/test-trainer.ts --url URL --admin-key KEY --base-sha BASE_SHA256
 */
import { createHash } from "node:crypto";
import { parseArgs } from "node:util";
import { demoAdapter, demoAdapterSpec } from "../../native/gguf/adapters";
import { TINY_MODEL_ARCHITECTURE, TINY_MODEL_NAME, TINY_MODEL_SHAPES } from "../../native/gguf/tiny-model";
import { encodeGguf, gv, type GgufWriteSpec } from "../../native/gguf/writer";
import { publishAdapter } from "../registry-client";
import type { PublishManifest, RegistryEntry } from "../registry-protocol";

export { publishAdapter };

export interface TrainerOptions {
  url: string;
  adminKey: string;
  /** sha256 of the base model the versions are trained for. */
  baseSha256?: string;
}

export interface TrainedVersions {
  exportSha256: string;
  exportLines: number;
  published: RegistryEntry[];
}

/** A copy of `spec` with another name and every lora_b scaled by `factor`. */
function variant(spec: GgufWriteSpec, name: string, factor: number): GgufWriteSpec {
  return {
    ...spec,
    metadata: { ...spec.metadata, "general.name": gv.str(name) },
    tensors: spec.tensors.map((t) => {
      if (!t.name.endsWith(".lora_b")) return t;
      const data = typeof t.data === "function" ? t.data() : t.data;
      return { ...t, data: data.map((x) => x * factor) };
    }),
  };
}

/** The manifest of a coding version trained from `exportSha256`. */
export function codingManifest(
  version: string,
  exportSha256: string,
  baseSha256: string | undefined,
  notes: string,
): PublishManifest {
  const coding = demoAdapter("coding");
  return {
    id: "coding",
    version,
    name: coding.name,
    domain: coding.domain,
    description: coding.description,
    base: {
      architecture: TINY_MODEL_ARCHITECTURE,
      embeddingLength: TINY_MODEL_SHAPES.tiny.embedding,
      baseName: TINY_MODEL_NAME,
      ...(baseSha256 ? { baseSha256 } : {}),
    },
    defaultScale: coding.defaultScale,
    routingExamples: [...coding.routingExamples],
    lineage: { parent: "1.0.0", trainedFrom: `export:coding.jsonl@sha256:${exportSha256}` },
    releaseNotes: notes,
  };
}

/** Export the coding dataset, "train" v2 and v3, publish both. */
export async function trainAndPublish(opts: TrainerOptions): Promise<TrainedVersions> {
  const res = await fetch(`${opts.url}/v1/export/coding.jsonl?type=sft`, {
    headers: { authorization: `Bearer ${opts.adminKey}` },
  });
  if (!res.ok) throw new Error(`export: HTTP ${res.status}`);
  const dataset = await res.text();
  const exportSha256 = createHash("sha256").update(dataset).digest("hex");
  const exportLines = dataset.split("\n").filter((l) => l.trim()).length;

  const v2 = encodeGguf(variant(demoAdapterSpec("coding"), "Macaron Coding adapter v2 (test trainer)", 0.8));
  const v3 = encodeGguf(
    variant(demoAdapterSpec("ui"), "Macaron Coding adapter v3 (test trainer, regressed)", 1),
  );
  const published = [
    await publishAdapter(
      opts,
      codingManifest("2.0.0", exportSha256, opts.baseSha256, `Trained on ${exportLines} examples.`),
      v2,
    ),
    await publishAdapter(
      opts,
      codingManifest("3.0.0", exportSha256, opts.baseSha256, "Built to regress (test)."),
      v3,
    ),
  ];
  return { exportSha256, exportLines, published };
}

if (process.argv[1]?.endsWith("test-trainer.ts")) {
  const { values } = parseArgs({
    options: { url: { type: "string" }, "admin-key": { type: "string" }, "base-sha": { type: "string" } },
  });
  if (!values.url || !values["admin-key"]) {
    console.error("Usage: tsx cloud/testing/test-trainer.ts --url URL --admin-key KEY [--base-sha SHA256]");
    process.exit(2);
  }
  const out = await trainAndPublish({
    url: values.url,
    adminKey: values["admin-key"],
    baseSha256: values["base-sha"],
  });
  for (const e of out.published) console.log(`published ${e.id} ${e.version} ${e.sha256}`);
}
