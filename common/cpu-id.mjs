// The CPU a llama.cpp build is tuned for (GGML_NATIVE: -march=native): its model and, on Linux,
// its flags. Both the app's build cache (electron/core/engine/native-cache.ts, part of the key)
// and the compiler cache (scripts/compiler-cache.mjs, its namespace) name the CPU by it. Plain
// JavaScript, because set-up runs the compiler cache before any TypeScript can.
import { readFileSync } from "node:fs";
import { cpus } from "node:os";

export function cpuId() {
  let flags = "";
  try {
    flags = /^flags\s*:(.*)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1]?.trim() ?? "";
  } catch {
    // Not Linux: the model name has to do.
  }
  return `${cpus()[0]?.model ?? "unknown"} ${flags}`.trim();
}
