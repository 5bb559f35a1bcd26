/** Where the CLI writes. Injected so tests run commands in-process and read what they print. */
export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  /** True when stderr is a terminal: progress displays only draw there. */
  readonly interactive: boolean;
}

export const processIO: CliIO = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  interactive: Boolean(process.stderr.isTTY),
};

/** Collects output in memory, for tests. */
export class BufferIO implements CliIO {
  stdout = "";
  stderr = "";
  readonly interactive = false;
  out(text: string): void {
    this.stdout += text;
  }
  err(text: string): void {
    this.stderr += text;
  }
}
