/**
 * One message's markdown parse per task. Opening a conversation mounts every answer at once; if
 * each parsed as it mounted, the page would be one task as long as all the parses together
 * (seconds for a conversation of long answers), with no frame and no input in between. Queued,
 * each answer is parsed, committed and laid out in its own task, so the longest task is the
 * slowest single answer (bounded by markdown-limits) and typing is answered between them.
 */

const queue: Array<() => void> = [];
let scheduled = false;

function flush(): void {
  scheduled = false;
  queue.shift()?.();
  if (queue.length > 0) next();
}

function next(): void {
  scheduled = true;
  // A macrotask, so the browser can paint and handle input between two parses.
  setTimeout(flush, 0);
}

/** Runs `job` in a task of its own after the jobs queued before it; returns a cancel function. */
export function enqueueParse(job: () => void): () => void {
  queue.push(job);
  if (!scheduled) next();
  return () => {
    const at = queue.indexOf(job);
    if (at >= 0) queue.splice(at, 1);
  };
}
