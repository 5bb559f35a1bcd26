/**
 * The peers' Python scripts beside this file, run with the tests' Python tools and the peers' extras
 * (.tools/venv with requirements-peers.lock: `npm run test:peers` installs them first) under
 * nice, each in its own process group so a timeout ends Spark's JVM with it: a peer test never
 * leaves a JVM running. Spark's jars resolve through Ivy into `.tools/ivy` (downloaded once).
 */
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { peerPython } from "../tools/python-env.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = join(HERE, "..", "..");
/** Where the peer runs write what they found, outside the committed files. */
export const RESULTS_DIR = join(REPO_ROOT, ".tools", "peers-results");
const IVY_DIR = join(REPO_ROOT, ".tools", "ivy");

export interface ScriptRun<T> {
  result: T;
  seconds: number;
}

/** Runs `script args...`; resolves with its stdout parsed as JSON, rejects with its stderr's tail. */
export function runPeerScript<T>(script: string, args: readonly string[], timeoutMs: number): Promise<ScriptRun<T>> {
  mkdirSync(IVY_DIR, { recursive: true });
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const python = peerPython();
    const child = spawn("nice", ["-n", "10", python, join(HERE, script), ...args], {
      detached: true,
      env: { ...process.env, LAKEWARDEN_IVY_DIR: IVY_DIR, PYSPARK_PYTHON: python },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => {
      killGroup(child.pid);
      reject(new Error(`${script} ${args[0]} took longer than ${timeoutMs / 1000} s: ended`));
    }, timeoutMs);
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      // Spark's JVM is the script's child: make sure nothing of the group outlives it.
      killGroup(child.pid);
      if (code !== 0) {
        reject(new Error(`${script} ${args[0]} exited ${code}: ${stderr.trim().split("\n").slice(-12).join(" | ")}`));
        return;
      }
      try {
        // The document starts on the first line that opens one: Spark's Ivy prints a line of its own to stdout first.
        resolve({ result: JSON.parse(stdout.slice(Math.max(0, stdout.search(/^[{[]/m)))) as T, seconds: (Date.now() - started) / 1000 });
      } catch {
        reject(new Error(`${script} ${args[0]} printed no JSON document: ${stdout.slice(0, 300)}`));
      }
    });
  });
}

/**
 * Runs `command args...` under nice in its own process group, the group killed when it ends or times
 * out (a JVM leaves no thread behind); resolves with its stdout, rejects with its stderr's tail.
 * `label` names it in errors.
 */
export function runNiced(label: string, command: string, args: readonly string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("nice", ["-n", "10", command, ...args], { detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => {
      killGroup(child.pid);
      reject(new Error(`${label} took longer than ${timeoutMs / 1000} s: ended`));
    }, timeoutMs);
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("close", (code) => {
      clearTimeout(timer);
      killGroup(child.pid);
      if (code === 0) resolve(stdout);
      else reject(new Error(`${label} exited ${code}: ${stderr.trim().split("\n").slice(-8).join(" | ")}`));
    });
  });
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // the group has already exited
  }
}
