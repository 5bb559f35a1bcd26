/** What the pipeline tells a progress display (the CLI draws one on a terminal; Lambdas pass none). */
export type CleanupStage = "reading manifests" | "listing files" | "proving kept versions" | "deleting files" | "writing checkpoint" | "pruning checkpoints";

export interface CleanupProgress {
  /** A new stage starts; `total` when the amount of work is known. */
  stage(name: CleanupStage, total?: number): void;
  /** `count` more units of the current stage are done. */
  advance(count: number): void;
  /** The run is over (successfully or not): a display clears itself. */
  finish(): void;
}

export const silentProgress: CleanupProgress = {
  stage: () => {},
  advance: () => {},
  finish: () => {},
};
