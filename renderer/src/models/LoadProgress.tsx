/**
 * The percentage to show for the engine's load fraction, or null when it reports none. The
 * engine's fraction is the weights read from disk: it reaches 1 while the context, KV cache and
 * warm-up still run, so "100%" would be shown for a load that is not done. Floor (0.996 is not
 * 100) and stop at 99: the bar goes away when the engine says "ready", which is the real 100%.
 */
export function loadPercent(progress: number | null): number | null {
  if (progress === null || !Number.isFinite(progress)) return null;
  return Math.min(99, Math.max(0, Math.floor(progress * 100)));
}

/** Model load progress; indeterminate when the engine reports no fraction. */
export function LoadProgress({ progress }: { progress: number | null }) {
  const percent = loadPercent(progress);
  return (
    <div className="load-progress">
      <progress aria-label="Loading model" max={100} value={percent ?? undefined} />
      <span className="load-progress__text">
        {percent === null ? "Loading model…" : `Loading model… ${percent}%`}
      </span>
    </div>
  );
}
