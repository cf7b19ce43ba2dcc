import { ApiError, type ModelInfo } from "../../api";
import { assertLoadableModel, isGgufError, summarizeModel } from "../../../native/gguf/reader";
import type { ModelInspector } from "./model-service";

/** The real inspector: native/gguf's reader. GGUF problems become ApiError("model_invalid"). */
export const ggufInspector: ModelInspector = {
  async inspect(path: string): Promise<ModelInfo> {
    try {
      const file = await assertLoadableModel(path);
      return summarizeModel(file, path);
    } catch (err) {
      if (isGgufError(err)) throw new ApiError("model_invalid", err.message);
      throw err;
    }
  },
};
