import type { LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";
import type { TokenLogprob } from "../../common/engine-protocol";

/**
 * The floor for a log-probability: a token the model gives probability 0 (underflow in float32)
 * would be -Infinity, which JSON cannot carry; OpenAI reports such tokens as -9999 too.
 */
const LOGPROB_FLOOR = -9999;

/**
 * Log-probabilities of an answer's tokens, and the `top` most likely tokens at each position,
 * by teacher forcing: node-llama-cpp's generation loop (LlamaChat, LlamaCompletion) does not
 * report probabilities, but LlamaContextSequence.controlledEvaluate does for the tokens it
 * evaluates. So the answer (and the prompt's last token, whose logits predict the first answer
 * token) is erased from the sequence and evaluated again with probabilities at every position;
 * the KV cache ends up as it was (the answer's last token is not evaluated, as after a
 * generation), so the next turn still reuses it.
 *
 * The probabilities are the model's own distribution: softmax of the logits at temperature 1,
 * before top-k/top-p/min-p, penalties, token biases and grammar. That is what OpenAI's
 * `logprobs` report, and it is exact for any sampler settings (no sampler state to replay).
 * Costs one more evaluation of the answer's tokens (batched, so far less than generating them).
 *
 * `answer` is the generated tokens in order, which the sequence holds from `start` (the prompt's
 * length) on; its very last one may be missing there (a generation ends before evaluating the
 * token it returned), and tokens generated after the answer (a stop string) are dropped.
 */
export async function scoreAnswer(
  sequence: LlamaContextSequence,
  model: LlamaModel,
  start: number,
  answer: readonly Token[],
  top: number,
): Promise<TokenLogprob[]> {
  if (answer.length === 0) return [];
  if (start < 1 || !holdsAnswer(sequence.contextTokens, start, answer))
    throw new Error("The answer's tokens are not where the sequence should hold them; cannot score them.");
  const end = sequence.nextTokenIndex;
  const before = sequence.contextTokens[start - 1]!;
  await sequence.eraseContextTokenRanges([{ start: start - 1, end }]);
  const inputs = [before, ...answer.slice(0, -1)].map(
    (token) =>
      [token, { generateNext: { probabilities: true } }] as [
        Token,
        { generateNext: { probabilities: true } },
      ],
  );
  const outputs = await sequence.controlledEvaluate(inputs);
  const text = (token: Token) => model.detokenize([token]);
  return answer.map((token, i) => {
    const probabilities = outputs[i]?.next.probabilities;
    if (!probabilities) throw new Error(`No probabilities came back for answer token ${i}.`);
    const alternatives: TokenLogprob["top"] = [];
    // The map is sorted by probability, most likely first (node-llama-cpp's contract).
    for (const [candidate, p] of probabilities) {
      if (alternatives.length >= top) break;
      alternatives.push(entry(text(candidate), p));
    }
    return { ...entry(text(token), probabilities.get(token) ?? 0), top: alternatives };
  });
}

function entry(token: string, probability: number): { token: string; logprob: number; bytes: number[] } {
  const logprob = probability > 0 ? Math.max(LOGPROB_FLOOR, Math.log(probability)) : LOGPROB_FLOOR;
  return { token, logprob, bytes: [...Buffer.from(token)] };
}

/**
 * Whether the context holds `answer` from `start` on: all of it, all but its last token, or all
 * of it followed by tokens generated after it (a stop string's, which the text leaves out).
 */
function holdsAnswer(context: readonly Token[], start: number, answer: readonly Token[]): boolean {
  const held = Math.min(context.length - start, answer.length);
  if (held < answer.length - 1) return false;
  for (let i = 0; i < held; i++) if (context[start + i] !== answer[i]) return false;
  return true;
}
