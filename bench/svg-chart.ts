/**
 * The small SVG writer of the bench charts (bench/charts/*.svg): a white canvas with a title,
 * pass-rate grid lines on a 0–1 axis, polylines with points, bars and legend entries. Pure
 * string building, no dependencies; compounding.ts and self-improve.ts draw with it.
 */

/** Canvas size and margins; the plot is the canvas inside the margins. */
export interface Frame {
  W: number;
  H: number;
  m: { l: number; r: number; t: number; b: number };
}

export const COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"] as const;

/** Text content with XML's special characters escaped. */
export const esc = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** y of a rate (0 at the bottom of the plot, 1 at its top). */
export const rateY =
  (f: Frame) =>
  (rate: number): number =>
    f.m.t + (1 - rate) * (f.H - f.m.t - f.m.b);

/** The opening tag, the white background and the title. */
export function svgOpen(f: Frame, title: string): string[] {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${f.W}" height="${f.H}" viewBox="0 0 ${f.W} ${f.H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${f.W}" height="${f.H}" fill="#fff"/>`,
    `<text x="${f.m.l}" y="18" font-size="14" font-weight="bold">${esc(title)}</text>`,
  ];
}

export const svgClose = (): string => "</svg>\n";

/** Horizontal grid lines with their rate labels on the left. */
export function rateGrid(f: Frame, ticks: readonly number[] = [0, 0.25, 0.5, 0.75, 1]): string[] {
  const y = rateY(f);
  return ticks.flatMap((t) => [
    `<line x1="${f.m.l}" x2="${f.W - f.m.r}" y1="${y(t)}" y2="${y(t)}" stroke="#ddd"/>`,
    `<text x="${f.m.l - 8}" y="${y(t) + 4}" text-anchor="end">${t.toFixed(2)}</text>`,
  ]);
}

/** A polyline through points (pixels) with a dot on each; "" for none. */
export function polyline(pts: ReadonlyArray<readonly [number, number]>, color: string, dash = ""): string {
  return pts.length === 0
    ? ""
    : `<polyline fill="none" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ""} points="${pts.map(([x, y]) => `${x},${y}`).join(" ")}"/>` +
        pts.map(([x, y]) => `<circle cx="${x}" cy="${y}" r="3" fill="${color}"/>`).join("");
}

/** Legend entry `i` right of the plot: a line sample (dashed or not) and its label. */
export function legendLine(f: Frame, i: number, color: string, label: string, dash = ""): string {
  const x = f.W - f.m.r;
  return (
    `<line x1="${x + 12}" x2="${x + 36}" y1="${f.m.t + 10 + i * 18}" y2="${f.m.t + 10 + i * 18}" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ""}/>` +
    `<text x="${x + 42}" y="${f.m.t + 14 + i * 18}">${esc(label)}</text>`
  );
}

/** Legend entry `i` right of the plot: a filled square and its label. */
export function legendBox(f: Frame, i: number, color: string, label: string): string {
  const x = f.W - f.m.r;
  return (
    `<rect x="${x + 18}" y="${f.m.t + 4 + i * 18}" width="12" height="12" fill="${color}"/>` +
    `<text x="${x + 42}" y="${f.m.t + 14 + i * 18}">${esc(label)}</text>`
  );
}

/** A bar from the 0 line up to `rate` (clamped to 0–1), `data-*` attributes naming what it shows. */
export function bar(
  f: Frame,
  x: number,
  width: number,
  rate: number,
  color: string,
  data: Record<string, string | number> = {},
): string {
  const y = rateY(f);
  // At least 2 px high: a bar of 0 (a zero-height rect is not drawn at all) shows as a line on the axis.
  const top = Math.min(y(Math.max(0, Math.min(1, rate))), y(0) - 2);
  const attrs = Object.entries(data)
    .map(([k, v]) => ` data-${k}="${esc(String(v))}"`)
    .join("");
  return `<rect x="${x}" y="${top}" width="${width}" height="${y(0) - top}" fill="${color}"${attrs}/>`;
}
