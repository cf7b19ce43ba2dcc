/** Model load progress; indeterminate when the engine reports no fraction. */
export function LoadProgress({ progress }: { progress: number | null }) {
  return (
    <div className="load-progress">
      <progress aria-label="Loading model" max={1} value={progress ?? undefined} />
      <span className="load-progress__text">
        {progress === null ? "Loading model…" : `Loading model… ${Math.round(progress * 100)}%`}
      </span>
    </div>
  );
}
