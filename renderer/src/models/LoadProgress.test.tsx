/** The load bar never claims 100% while the engine is still loading (issue 13). */
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { LoadProgress, loadPercent } from "./LoadProgress";

describe("loadPercent", () => {
  it("stops at 99 while loading, even when the engine reports the whole file read", () => {
    expect(loadPercent(1)).toBe(99);
    expect(loadPercent(0.996)).toBe(99);
    expect(loadPercent(1.2)).toBe(99);
  });

  it("floors instead of rounding up, and keeps the low end at 0", () => {
    expect(loadPercent(0.429)).toBe(42);
    expect(loadPercent(0)).toBe(0);
    expect(loadPercent(-0.1)).toBe(0);
  });

  it("is indeterminate without a fraction", () => {
    expect(loadPercent(null)).toBeNull();
    expect(loadPercent(Number.NaN)).toBeNull();
  });
});

describe("LoadProgress", () => {
  it("shows 99% and a bar short of full for a fraction of 1", () => {
    const html = renderToStaticMarkup(<LoadProgress progress={1} />);
    expect(html).toContain("Loading model… 99%");
    expect(html).not.toContain("100%");
    expect(html).toMatch(/<progress[^>]*value="99"/);
  });

  it("shows an indeterminate bar without a fraction", () => {
    const html = renderToStaticMarkup(<LoadProgress progress={null} />);
    expect(html).toContain("Loading model…");
    expect(html).not.toMatch(/value=/);
  });
});
