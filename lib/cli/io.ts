/** Where the CLI writes. Injected so tests run commands in-process and read what they print. */
export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  /** True when stderr is a terminal: progress displays only draw there. */
  readonly interactive: boolean;
}

/**
 * Writes to a process stream that may be a pipe whose reader has gone (`lakewarden versions T
 * --json | head -1`): the write fails with EPIPE, which Node raises as an unhandled 'error'
 * event, a stack trace. Here EPIPE closes the stream for good: later output is dropped quietly
 * and the command runs to its end with its usual exit status, as `| head` users expect (a
 * cleanup is never cut off half way by its reader leaving). Any other write error is thrown.
 */
function pipeSafeWriter(stream: NodeJS.WriteStream): (text: string) => void {
  let closed = false;
  let listening = false;
  return (text) => {
    if (closed) return;
    if (!listening) {
      listening = true;
      stream.on("error", (error: NodeJS.ErrnoException) => {
        if (error.code !== "EPIPE") throw error;
        closed = true;
      });
    }
    stream.write(text);
  };
}

export const processIO: CliIO = {
  out: pipeSafeWriter(process.stdout),
  err: pipeSafeWriter(process.stderr),
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
