/** Public surface of native/gguf: read and check GGUF files, write the demo model and adapters. */
export * from "./reader";
export {
  encodeGguf,
  gv,
  writeGguf,
  type GgufWriteSpec,
  type GgufWriteTensor,
  type GgufWriteValue,
} from "./writer";
export { tinyModelSpec, TINY_MODEL_NAME, TINY_MODEL_SHAPES, type TinyModelSize } from "./tiny-model";
export {
  QWEN_ARCHITECTURES,
  TINY_QWEN_NAMES,
  TINY_QWEN_SHAPES,
  tinyQwenSpec,
  type QwenArchitecture,
} from "./tiny-qwen";
export {
  DEMO_ADAPTERS,
  demoAdapterSpec,
  demoAdapterSpecFor,
  type FixtureArchitecture,
  wrongBaseAdapterSpec,
  writeWrongBaseAdapter,
  type DemoAdapter,
  type DemoAdapterId,
} from "./adapters";
export {
  ensureFixtureModel,
  writeFixtures,
  type FixtureAdapterPaths,
  type FixtureOptions,
  type FixturePaths,
} from "./fixtures";
