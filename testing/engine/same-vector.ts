import { expect } from "vitest";

/**
 * The same embedding to within float rounding: the same length, every component within 1e-6.
 * A text's vector depends in its last digits on the texts it shares a decode with
 * (native/engine/embedder.ts batches a request's texts), so one text alone and the same text in
 * a batch are not bit-for-bit equal; anything further apart than rounding is a different vector.
 */
export function expectSameVector(
  actual: readonly number[] | undefined,
  expected: readonly number[] | undefined,
): void {
  expect(actual).toBeDefined();
  expect(actual).toHaveLength(expected!.length);
  const worst = Math.max(...actual!.map((x, i) => Math.abs(x - expected![i]!)));
  expect(worst).toBeLessThan(1e-6);
}
