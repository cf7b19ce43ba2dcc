import { ApiError } from "../../api";
import type { DomainHandlers } from "../handlers";
import type { MemoryService } from "./memory-service";

export function memoryHandlers(memory: MemoryService): DomainHandlers<"memories"> {
  return {
    "memories.list": () => memory.list(),
    "memories.create": ({ text }) => memory.create(text),
    "memories.update": ({ id, text, status }) => {
      if (text === undefined && status === undefined) {
        throw new ApiError("invalid_input", 'Give a new text or accept the memory (status "active").');
      }
      return memory.update(id, { text, status });
    },
    "memories.delete": ({ id }) => ({ deleted: memory.delete(id) }),
  };
}
