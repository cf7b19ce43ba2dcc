/**
 * Hand-built coding versions for the tests of release mechanics (downloads, the gate's verdicts,
 * promotion, rollback, the Releases UI): made from the deterministic marker fixtures, NOT
 * trained. v2 is the coding fixture with its LoRA B scaled (passes the smoke contract), v3 is
 * the UI fixture named coding (answers "uuuu": rejected). The learning loop itself, with the
 * PyTorch trainer, is scripts/cycle/cycle.loop.test.ts.
 */
import { createHash } from "node:crypto";
import { demoAdapter, demoAdapterSpec } from "../../native/gguf/adapters";
import { TINY_MODEL_ARCHITECTURE, TINY_MODEL_NAME, TINY_MODEL_SHAPES } from "../../native/gguf/tiny-model";
import { encodeGguf, gv, type GgufWriteSpec } from "../../native/gguf/writer";
import { publishAdapter } from "../../cloud/registry-client";
import type { PublishManifest, RegistryEntry } from "../../common/registry-protocol";

export { publishAdapter };

export interface HandBuiltOptions {
  url: string;
  adminKey: string;
  /** sha256 of the base model the versions are trained for. */
  baseSha256?: string;
}

export interface HandBuiltVersions {
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

/** Export the coding dataset (for its sha256 in the lineage), build v2 and v3 by hand, publish both. */
export async function publishHandBuiltVersions(opts: HandBuiltOptions): Promise<HandBuiltVersions> {
  const res = await fetch(`${opts.url}/v1/export/coding.jsonl?type=sft`, {
    headers: { authorization: `Bearer ${opts.adminKey}` },
  });
  if (!res.ok) throw new Error(`export: HTTP ${res.status}`);
  const dataset = await res.text();
  const exportSha256 = createHash("sha256").update(dataset).digest("hex");
  const exportLines = dataset.split("\n").filter((l) => l.trim()).length;

  const v2 = encodeGguf(variant(demoAdapterSpec("coding"), "Macaron Coding adapter v2 (hand-built)", 0.8));
  const v3 = encodeGguf(
    variant(demoAdapterSpec("ui"), "Macaron Coding adapter v3 (hand-built, regressed)", 1),
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
