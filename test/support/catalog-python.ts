/**
 * One long-lived `catalog_table.py serve` process (test/catalog/catalog_table.py) for a test
 * file: each call sends the command's arguments as one JSON line and reads its one-line answer.
 * A process per command paid pyiceberg's, pyarrow's and boto3's imports and the catalog client's
 * setup every time (about 1.6 CPU seconds of imports alone), which made the catalog tests slow.
 * Calls are answered in order; a second environment (another endpoint) needs its own worker.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { toolPython } from "../tools/python-env.ts";

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "../catalog/catalog_table.py");

export interface CatalogPython {
  /** Runs one command (`["write", "db.t", "s3://...", "--commits", "3"]`) and parses what it printed; rejects with its one-line error. */
  run<T>(args: readonly string[]): Promise<T>;
  stop(): Promise<void>;
}

export function startCatalogPython(env: NodeJS.ProcessEnv): CatalogPython {
  const child: ChildProcess = spawn(toolPython(), [SCRIPT, "serve"], { env, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const waiting: { resolve: (line: string) => void; reject: (error: Error) => void }[] = [];
  const lines = createInterface({ input: child.stdout! });
  lines.on("line", (line) => waiting.shift()?.resolve(line));
  child.once("exit", (code) => {
    for (const call of waiting.splice(0)) call.reject(new Error(`catalog_table.py serve exited ${code}: ${stderr.trim().split("\n").at(-1) ?? ""}`));
  });
  const killChild = () => child.kill("SIGKILL");
  process.once("exit", killChild);
  return {
    async run<T>(args: readonly string[]): Promise<T> {
      const line = await new Promise<string>((resolve, reject) => {
        waiting.push({ resolve, reject });
        child.stdin!.write(`${JSON.stringify(args)}\n`);
      });
      const answer = JSON.parse(line) as { out?: string; error?: string };
      if (answer.error !== undefined) throw new Error(`catalog_table.py ${args[0]}: ${answer.error}`);
      return JSON.parse(answer.out!) as T;
    },
    async stop() {
      process.removeListener("exit", killChild);
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.stdin!.end();
      await exited;
    },
  };
}
