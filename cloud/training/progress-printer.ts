/**
 * Prints a training run's progress on a terminal: the dataset, then step/steps, loss, tokens/s
 * and ETA (one line rewritten in place on a TTY, one line per report otherwise, at most one a
 * second), the held-out loss before and after, and where the files went.
 */
import type { TrainProgress, TrainResult } from "./train";

export interface PrinterOptions {
  write: (text: string) => void;
  /** Rewrite the progress line in place (a TTY) instead of printing one line per report. */
  tty: boolean;
  /** Print the trainer's own log lines too. */
  verbose?: boolean;
  now?: () => number;
}

/** `75` → `1:15`; `3725` → `1:02:05`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, "0");
  return hh > 0 ? `${hh}:${String(mm).padStart(2, "0")}:${ss}` : `${mm}:${ss}`;
}

function loss(value: number | null | undefined): string {
  return typeof value === "number" ? value.toFixed(4) : "n/a";
}

/** A progress callback for trainAdapter, and the summary printed at the end. */
export function progressPrinter(options: PrinterOptions) {
  const now = options.now ?? (() => performance.now());
  let lastLine = -Infinity;
  let open = false;
  const line = (text: string) => {
    if (open) options.write("\n");
    open = false;
    options.write(`${text}\n`);
  };
  const onProgress = (p: TrainProgress): void => {
    switch (p.type) {
      case "stage":
        if (p.stage !== "training") line(`${p.message}…`);
        return;
      case "tokenized": {
        const d = p.dataset;
        const extra = [
          d.droppedTooLong > 0 ? `${d.droppedTooLong} too long, dropped` : "",
          d.truncated > 0 ? `${d.truncated} truncated` : "",
          d.malformed.length > 0 ? `${d.malformed.length} malformed, skipped` : "",
        ].filter(Boolean);
        line(
          `dataset: ${d.lines} lines → ${d.examples} training + ${p.heldoutExamples} held-out examples, ` +
            `${p.tokens} tokens${extra.length ? ` (${extra.join(", ")})` : ""}`,
        );
        return;
      }
      case "log":
        if (options.verbose) line(p.line);
        return;
      case "trainer":
        break;
    }
    const e = p.event;
    if (e.event === "start") {
      line(
        `training ${e.examples} examples, ${e.steps} steps, ${e.trainableParams} trainable parameters ` +
          `on ${e.device} × ${e.worldSize} (torch ${e.torch}, trainer ${e.trainer})`,
      );
      if (e.zeroVarianceGroups)
        line(
          `GRPO: ${e.zeroVarianceGroups} of ${e.groups} groups have rewards that are all equal (no signal): left out`,
        );
    } else if (e.event === "progress") {
      const text =
        `step ${e.step}/${e.steps}  loss ${loss(e.loss)}  ` +
        (e.kl === undefined ? "" : `KL ${loss(e.kl)}  `) +
        `${Math.round(e.tokensPerSecond)} tok/s  ` +
        `ETA ${formatDuration(e.etaSeconds)}`;
      if (options.tty) {
        options.write(`\r\x1b[2K${text}`);
        open = true;
      } else if (now() - lastLine >= 1000 || e.step === e.steps || e.step === 1) {
        lastLine = now();
        line(text);
      }
    } else if (e.event === "heldout") {
      line(`held-out loss at step ${e.step}: ${loss(e.loss)}`);
    } else if (e.event === "checkpoint") {
      if (options.verbose) line(`checkpoint at step ${e.step}: ${e.path}`);
    }
  };
  const summary = (result: TrainResult): void => {
    const h = result.manifest.lineage.heldout;
    if (h.examples > 0)
      line(`held-out loss (${h.examples} examples): ${loss(h.lossBefore)} → ${loss(h.lossAfter)}`);
    line(`adapter:  ${result.adapterPath}`);
    line(`manifest: ${result.manifestPath}`);
    line(
      `done in ${formatDuration(result.seconds.total)} (tokenizing ${result.seconds.tokenize.toFixed(1)} s, ` +
        `training ${result.seconds.train.toFixed(1)} s)`,
    );
  };
  /** Ends a progress line left open on a TTY (before an error is printed). */
  const finish = (): void => {
    if (open) options.write("\n");
    open = false;
  };
  return { onProgress, summary, finish };
}
