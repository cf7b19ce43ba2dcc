import { describe, expect, it } from "vitest";
import {
  engineThreads,
  flashAttentionFor,
  IN_MEMORY_MAX_BYTES,
  IN_MEMORY_SHARE,
  ramReserveBytes,
  weightsInMemory,
} from "./llama-backend";

describe("engineThreads", () => {
  it("leaves one core to the JS thread", () => {
    expect(engineThreads({}, 2)).toBe(1);
    expect(engineThreads({}, 8)).toBe(7);
    expect(engineThreads({}, 1)).toBe(1);
  });

  it("takes MACARON_ENGINE_THREADS when it is a positive integer", () => {
    expect(engineThreads({ MACARON_ENGINE_THREADS: "3" }, 2)).toBe(3);
    expect(engineThreads({ MACARON_ENGINE_THREADS: "0" }, 4)).toBe(3);
    expect(engineThreads({ MACARON_ENGINE_THREADS: "many" }, 4)).toBe(3);
  });
});

describe("flashAttentionFor", () => {
  it("is off on CPU and left to llama.cpp on a GPU", () => {
    expect(flashAttentionFor(null, {})).toBe(false);
    expect(flashAttentionFor("cuda", {})).toBe("auto");
    expect(flashAttentionFor("metal", {})).toBe("auto");
  });

  it("takes MACARON_FLASH_ATTENTION=on|off|auto, and ignores anything else", () => {
    expect(flashAttentionFor(null, { MACARON_FLASH_ATTENTION: "on" })).toBe(true);
    expect(flashAttentionFor("cuda", { MACARON_FLASH_ATTENTION: "off" })).toBe(false);
    expect(flashAttentionFor(null, { MACARON_FLASH_ATTENTION: "auto" })).toBe("auto");
    expect(flashAttentionFor(null, { MACARON_FLASH_ATTENTION: "yes" })).toBe(false);
  });
});

describe("ramReserveBytes", () => {
  it("reads MACARON_ENGINE_RAM_RESERVE_MB as MiB, and leaves anything else to node-llama-cpp", () => {
    expect(ramReserveBytes({ MACARON_ENGINE_RAM_RESERVE_MB: "2048" })).toBe(2 * 1024 ** 3);
    expect(ramReserveBytes({})).toBeUndefined();
    expect(ramReserveBytes({ MACARON_ENGINE_RAM_RESERVE_MB: "0" })).toBeUndefined();
    expect(ramReserveBytes({ MACARON_ENGINE_RAM_RESERVE_MB: "lots" })).toBeUndefined();
    expect(ramReserveBytes({ MACARON_ENGINE_RAM_RESERVE_MB: "-5" })).toBeUndefined();
  });
});

describe("weightsInMemory", () => {
  const GB = 1024 ** 3;
  it("reads weights that take at most a quarter of the free memory, and 4 GiB, into memory on the CPU", () => {
    expect(IN_MEMORY_SHARE).toBe(0.25);
    expect(IN_MEMORY_MAX_BYTES).toBe(4 * GB);
    expect(weightsInMemory(null, 0.2 * GB, 16 * GB, {})).toBe(true);
    expect(weightsInMemory(null, 4 * GB, 16 * GB, {})).toBe(true);
    expect(weightsInMemory(null, 4 * GB + 1, 16 * GB, {})).toBe(false);
    expect(weightsInMemory(null, 4 * GB + 1, 64 * GB, {})).toBe(false);
  });
  it("counts the free memory less the engine's RAM reserve", () => {
    expect(weightsInMemory(null, 1 * GB, 4 * GB, {})).toBe(true);
    expect(weightsInMemory(null, 1 * GB, 4 * GB, { MACARON_ENGINE_RAM_RESERVE_MB: "1024" })).toBe(false);
  });
  it("leaves it to node-llama-cpp on a GPU, or when the size is unknown", () => {
    expect(weightsInMemory("cuda", 0.2 * GB, 16 * GB, {})).toBe(false);
    expect(weightsInMemory(null, 0, 16 * GB, {})).toBe(false);
  });
  it("MACARON_ENGINE_MMAP=on always maps, =off always reads in", () => {
    expect(weightsInMemory(null, 0.2 * GB, 16 * GB, { MACARON_ENGINE_MMAP: "on" })).toBe(false);
    expect(weightsInMemory("cuda", 8 * GB, 16 * GB, { MACARON_ENGINE_MMAP: "off" })).toBe(true);
    expect(weightsInMemory(null, 0.2 * GB, 16 * GB, { MACARON_ENGINE_MMAP: "auto" })).toBe(true);
  });
});
