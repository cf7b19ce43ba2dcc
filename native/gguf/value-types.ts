/** "GGUF" read as a little-endian uint32. */
export const GGUF_MAGIC = 0x46554747;

/** GGUF metadata value type ids (gguf.h `enum gguf_type`). */
export const GgufValueType = {
  Uint8: 0,
  Int8: 1,
  Uint16: 2,
  Int16: 3,
  Uint32: 4,
  Int32: 5,
  Float32: 6,
  Bool: 7,
  String: 8,
  Array: 9,
  Uint64: 10,
  Int64: 11,
  Float64: 12,
} as const;
export type GgufValueType = (typeof GgufValueType)[keyof typeof GgufValueType];

/** Byte width of the fixed-size value types; strings and arrays are absent. */
export const FIXED_VALUE_SIZE: ReadonlyMap<number, number> = new Map([
  [GgufValueType.Uint8, 1],
  [GgufValueType.Int8, 1],
  [GgufValueType.Uint16, 2],
  [GgufValueType.Int16, 2],
  [GgufValueType.Uint32, 4],
  [GgufValueType.Int32, 4],
  [GgufValueType.Float32, 4],
  [GgufValueType.Bool, 1],
  [GgufValueType.Uint64, 8],
  [GgufValueType.Int64, 8],
  [GgufValueType.Float64, 8],
]);
