/** Runs the real `lakewarden` executable (lib/cli/bin.js) in a child process, as a user would. */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../../lib/cli/bin.js", import.meta.url));

export interface ExecutableResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runLakewarden(args: readonly string[], env: Record<string, string> = {}): Promise<ExecutableResult> {
  return runProcess(process.execPath, [BIN, ...args], { env });
}

/** Runs a command to its end, collecting its output; `env` is added to this process's environment. */
export function runProcess(command: string, args: readonly string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<ExecutableResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...(options.cwd ? { cwd: options.cwd } : {}), env: { ...process.env, ...options.env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

export function lastLine(text: string): string {
  const lines = text.trimEnd().split("\n");
  return lines[lines.length - 1] ?? "";
}
