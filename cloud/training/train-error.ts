/**
 * Why a training run failed. The Python trainer's codes (its "error" event) pass through as
 * they are; the others are found on this side before it starts.
 */
export type TrainErrorCode =
  // The Python trainer's (see macaron_trainer's error event).
  | "bad_base"
  | "bad_data"
  | "empty_data"
  | "bad_parent"
  | "nan_loss"
  | "disk_full"
  | "bad_args"
  | "internal"
  // This side's.
  | "no_python"
  | "no_torch"
  | "trainer_failed"
  | "aborted";

/** A failure whose message is a complete sentence meant for the user. */
export class TrainError extends Error {
  override readonly name = "TrainError";

  constructor(
    readonly code: TrainErrorCode,
    message: string,
  ) {
    super(message);
  }
}
