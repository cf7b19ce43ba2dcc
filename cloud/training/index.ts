/**
 * Training LoRA adapters for the app (`npm run train`, the improvement cycle): trainAdapter and
 * what it takes, reports and throws.
 */
export { trainAdapter, type TrainOptions, type TrainProgress, type TrainResult } from "./train";
export { nextVersion } from "./train-checks";
export { TrainError, type TrainErrorCode } from "./train-error";
export type { TrainedAdapterManifest, TrainerReport, TrainingLineage } from "./trained-manifest";
export type { DatasetStats, MaxLengthPolicy, TrainMethod } from "./tokenize-dataset";
export type { TrainerEvent } from "./python-trainer";
export { progressPrinter } from "./progress-printer";
