/**
 * The run's one stop guard: asked between the stages and before every step that writes or
 * deletes, so no mutation starts once a stop is due. A stop is due when the abort signal fired,
 * the hard deadline (a Lambda's end) passed, or the budget (`maxDurationMs`) ran out after the
 * run did its minimum of new work.
 */
export interface StopGuard {
  /** The earlier of the deadline and the budget's end (null: none). */
  readonly deadline: Date | null;
  /** Before a step: true → a stop is due, the step must not start. */
  due(): boolean;
  /** Before a piece of a stage's work on this many objects: true → stop; false → it counts as done. */
  beforeWork(objects: number): boolean;
}

export interface StopGuardInput {
  now: () => Date;
  startedAt: Date;
  deadline?: Date | undefined;
  maxDurationMs?: number | undefined;
  minWorkPerRun: number;
  signal?: AbortSignal | undefined;
}

export function stopGuard(input: StopGuardInput): StopGuard {
  const budgetEnd = input.maxDurationMs !== undefined ? new Date(input.startedAt.getTime() + input.maxDurationMs) : undefined;
  const deadline = [input.deadline, budgetEnd].filter((d): d is Date => d !== undefined).sort((a, b) => a.getTime() - b.getTime())[0] ?? null;
  let work = 0;
  const due = (): boolean => {
    if (input.signal?.aborted) return true;
    if (deadline === null) return false;
    // One clock read a check: a test clock that moves as it is read stops the run at one guard.
    const at = input.now().getTime();
    if (input.deadline !== undefined && at >= input.deadline.getTime()) return true;
    return budgetEnd !== undefined && at >= budgetEnd.getTime() && work >= input.minWorkPerRun;
  };
  return {
    deadline,
    due,
    beforeWork(objects) {
      if (due()) return true;
      work += objects;
      return false;
    },
  };
}
