/**
 * Sizes for people, the one byte formatter of the tree: the renderer (adapters, models, the
 * upload preview), the hub's disk-space check and the GGUF reader's errors all format with it,
 * each in the style its messages use.
 */
export interface ByteStyle {
  /**
   * 1024 (the default): KB, MB, GB, TB. 1000: kB, MB, GB, TB, as disks are sold and free space
   * is counted; kilobytes then read whole ("410 kB"), larger units with one decimal.
   */
  base?: 1024 | 1000;
  /** Always one digit after the point ("3.0 GB"); by default at most one ("1.7 KB", "3 GB"). */
  fixed?: boolean;
  /** Sizes under one unit in words ("1 byte", "900 bytes") instead of "512 B". */
  words?: boolean;
  /** The exact count after the size: "2.0 KB (2048 bytes)". */
  exact?: boolean;
}

const shortFormat = new Intl.NumberFormat("en", { maximumFractionDigits: 1 });

export function formatBytes(bytes: number, style: ByteStyle = {}): string {
  const base = style.base ?? 1024;
  if (bytes < base) {
    return style.words ? `${bytes} ${bytes === 1 ? "byte" : "bytes"}` : `${bytes} B`;
  }
  const units = base === 1000 ? ["kB", "MB", "GB", "TB"] : ["KB", "MB", "GB", "TB"];
  let value = bytes / base;
  let unit = 0;
  while (value >= base && unit < units.length - 1) {
    value /= base;
    unit += 1;
  }
  const digits = base === 1000 ? (unit === 0 ? 0 : 1) : style.fixed ? 1 : null;
  const size = `${digits === null ? shortFormat.format(value) : value.toFixed(digits)} ${units[unit]}`;
  return style.exact ? `${size} (${bytes} bytes)` : size;
}
