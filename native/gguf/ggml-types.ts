/**
 * ggml tensor types known to this reader, with their block geometry, from llama.cpp's
 * `ggml/src/ggml.c` type_traits (the copy bundled with node-llama-cpp 3.21.1).
 * A tensor row of `n` elements takes `n / blockSize * bytesPerBlock` bytes.
 */
export interface GgmlTypeInfo {
  readonly name: string;
  readonly blockSize: number;
  readonly bytesPerBlock: number;
}

const QK_K = 256;

const TYPES: ReadonlyMap<number, GgmlTypeInfo> = new Map<number, GgmlTypeInfo>([
  [0, { name: "F32", blockSize: 1, bytesPerBlock: 4 }],
  [1, { name: "F16", blockSize: 1, bytesPerBlock: 2 }],
  [2, { name: "Q4_0", blockSize: 32, bytesPerBlock: 18 }],
  [3, { name: "Q4_1", blockSize: 32, bytesPerBlock: 20 }],
  [6, { name: "Q5_0", blockSize: 32, bytesPerBlock: 22 }],
  [7, { name: "Q5_1", blockSize: 32, bytesPerBlock: 24 }],
  [8, { name: "Q8_0", blockSize: 32, bytesPerBlock: 34 }],
  [9, { name: "Q8_1", blockSize: 32, bytesPerBlock: 36 }],
  [10, { name: "Q2_K", blockSize: QK_K, bytesPerBlock: 84 }],
  [11, { name: "Q3_K", blockSize: QK_K, bytesPerBlock: 110 }],
  [12, { name: "Q4_K", blockSize: QK_K, bytesPerBlock: 144 }],
  [13, { name: "Q5_K", blockSize: QK_K, bytesPerBlock: 176 }],
  [14, { name: "Q6_K", blockSize: QK_K, bytesPerBlock: 210 }],
  [15, { name: "Q8_K", blockSize: QK_K, bytesPerBlock: 292 }],
  [16, { name: "IQ2_XXS", blockSize: QK_K, bytesPerBlock: 66 }],
  [17, { name: "IQ2_XS", blockSize: QK_K, bytesPerBlock: 74 }],
  [18, { name: "IQ3_XXS", blockSize: QK_K, bytesPerBlock: 98 }],
  [19, { name: "IQ1_S", blockSize: QK_K, bytesPerBlock: 50 }],
  [20, { name: "IQ4_NL", blockSize: 32, bytesPerBlock: 18 }],
  [21, { name: "IQ3_S", blockSize: QK_K, bytesPerBlock: 110 }],
  [22, { name: "IQ2_S", blockSize: QK_K, bytesPerBlock: 82 }],
  [23, { name: "IQ4_XS", blockSize: QK_K, bytesPerBlock: 136 }],
  [24, { name: "I8", blockSize: 1, bytesPerBlock: 1 }],
  [25, { name: "I16", blockSize: 1, bytesPerBlock: 2 }],
  [26, { name: "I32", blockSize: 1, bytesPerBlock: 4 }],
  [27, { name: "I64", blockSize: 1, bytesPerBlock: 8 }],
  [28, { name: "F64", blockSize: 1, bytesPerBlock: 8 }],
  [29, { name: "IQ1_M", blockSize: QK_K, bytesPerBlock: 56 }],
  [30, { name: "BF16", blockSize: 1, bytesPerBlock: 2 }],
  [34, { name: "TQ1_0", blockSize: QK_K, bytesPerBlock: 54 }],
  [35, { name: "TQ2_0", blockSize: QK_K, bytesPerBlock: 66 }],
  [39, { name: "MXFP4", blockSize: 32, bytesPerBlock: 17 }],
  [40, { name: "NVFP4", blockSize: 64, bytesPerBlock: 36 }],
  [41, { name: "Q1_0", blockSize: 128, bytesPerBlock: 18 }],
  [42, { name: "Q2_0", blockSize: 64, bytesPerBlock: 18 }],
]);

/** The ggml type ids this project writes. */
export const GGML_TYPE_F32 = 0;
export const GGML_TYPE_F16 = 1;

/** Block geometry of a ggml type id, or undefined for ids this reader does not know. */
export function ggmlTypeInfo(type: number): GgmlTypeInfo | undefined {
  return TYPES.get(type);
}
