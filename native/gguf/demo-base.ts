import { randomValues } from "./prng";
import { byteModelMetadata, vocabularySize, type TinyModelShape } from "./tiny-model";
import type { GgufWriteSpec, GgufWriteTensor } from "./writer";

/**
 * The starting point of the demo base that ships with the app: the same byte vocabulary and
 * ChatML template as the fixtures, but an ordinary transformer initialisation (no hand-set
 * output bias) so that the trainer can pretrain it into a model that answers (see
 * scripts/build-demo.ts). The test fixtures stay in tiny-model.ts, deterministic and untrained.
 */

export const DEMO_BASE_SHAPE: TinyModelShape = {
  embedding: 128,
  layers: 4,
  heads: 4,
  kvHeads: 4,
  feedForward: 384,
  contextLength: 4096,
  tensorType: "F32",
};

export const DEMO_BASE_NAME = "Macaron demo (trained, 0.7M parameters)";
const SEED = "macaron-demo-base-v1";
/** GPT-2's initialisation scale; residual writes are scaled down by depth as GPT-2 does. */
const INIT_STD = 0.02;

/** The untrained demo base (GGUF spec): what `pretrain` starts from. */
export function demoBaseInitSpec(shape: TinyModelShape = DEMO_BASE_SHAPE): GgufWriteSpec {
  const E = shape.embedding;
  const V = vocabularySize();
  const FF = shape.feedForward;
  const hd = E / shape.heads;
  const kvDim = shape.kvHeads * hd;
  const residual = INIT_STD / Math.sqrt(2 * shape.layers);
  const weight = (name: string, nIn: number, nOut: number, std = INIT_STD): GgufWriteTensor => ({
    name,
    dims: [nIn, nOut],
    type: shape.tensorType,
    data: () => randomValues(`${SEED}:${name}`, nIn * nOut, std),
  });
  const norm = (name: string): GgufWriteTensor => ({
    name,
    dims: [E],
    type: "F32",
    data: new Float32Array(E).fill(1),
  });
  const tensors: GgufWriteTensor[] = [weight("token_embd.weight", E, V)];
  for (let l = 0; l < shape.layers; l++) {
    const p = `blk.${l}`;
    tensors.push(
      norm(`${p}.attn_norm.weight`),
      weight(`${p}.attn_q.weight`, E, shape.heads * hd),
      weight(`${p}.attn_k.weight`, E, kvDim),
      weight(`${p}.attn_v.weight`, E, kvDim),
      weight(`${p}.attn_output.weight`, shape.heads * hd, E, residual),
      norm(`${p}.ffn_norm.weight`),
      weight(`${p}.ffn_gate.weight`, E, FF),
      weight(`${p}.ffn_up.weight`, E, FF),
      weight(`${p}.ffn_down.weight`, FF, E, residual),
    );
  }
  tensors.push(norm("output_norm.weight"), weight("output.weight", E, V));
  const metadata = byteModelMetadata("demo", shape, DEMO_BASE_NAME);
  return { metadata, tensors };
}
