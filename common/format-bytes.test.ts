import { describe, expect, it } from "vitest";
import { formatBytes } from "./format-bytes";

describe("formatBytes", () => {
  it("by default: binary units, at most one decimal", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(1760)).toBe("1.7 KB");
    expect(formatBytes(3 * 1024 * 1024 * 1024)).toBe("3 GB");
    expect(formatBytes(5 * 1024 ** 4)).toBe("5 TB");
  });

  it("fixed, in words, with the exact count", () => {
    const style = { fixed: true, words: true, exact: true };
    expect(formatBytes(1, style)).toBe("1 byte");
    expect(formatBytes(900, style)).toBe("900 bytes");
    expect(formatBytes(2048, style)).toBe("2.0 KB (2048 bytes)");
    expect(formatBytes(3 * 1024 * 1024, style)).toBe("3.0 MB (3145728 bytes)");
    expect(formatBytes(460_000, { fixed: true, words: true })).toBe("449.2 KB");
  });

  it("decimal units as disks count them: whole kB, one decimal above", () => {
    expect(formatBytes(999, { base: 1000 })).toBe("999 B");
    expect(formatBytes(410_000, { base: 1000 })).toBe("410 kB");
    expect(formatBytes(11_000_000, { base: 1000 })).toBe("11.0 MB");
    expect(formatBytes(2.5e9, { base: 1000 })).toBe("2.5 GB");
  });
});
