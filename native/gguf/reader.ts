/**
 * The GGUF reader's public surface: parse a file's header, metadata and tensor table
 * (gguf-parser.ts), and judge what it is and whether it loads (model-check.ts).
 */
export { GgufError, isGgufError, type GgufErrorCode } from "./gguf-error";
export {
  readGguf,
  type GgufArraySummary,
  type GgufFile,
  type GgufMetadataValue,
  type GgufScalar,
  type GgufTensorInfo,
  type ReadGgufOptions,
} from "./gguf-parser";
export { assertAdapterFits, assertLoadableModel, classifyGguf, summarizeModel } from "./model-check";
