/** Invariant violations found during the soak: each is a bug until explained. */
export interface Violation {
  /** Which check found it (timeline, live-version, tag, branch, head, checkpoint, files, openTable, reader, cleanup). */
  check: string;
  message: string;
  round: number;
  atMs: number;
}

export class Violations {
  readonly list: Violation[] = [];
  round = 0;
  private readonly startedAt = Date.now();

  add(check: string, message: string): void {
    const violation = { check, message, round: this.round, atMs: Date.now() - this.startedAt };
    this.list.push(violation);
    process.stderr.write(`VIOLATION [${check}] round ${violation.round}: ${message}\n`);
  }

  get count(): number {
    return this.list.length;
  }
}
