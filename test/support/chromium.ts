/**
 * Headless Chromium (Debian's `chromium` package; .ci/run installs it when missing) driven by
 * its own command line: a screenshot, the DOM after scripts ran, and the console messages it
 * logged. Each call uses a fresh profile directory under `workDir`, removed afterwards.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

export interface ChromiumRun {
  code: number;
  stdout: string;
  stderr: string;
  /** Lines Chromium logged for console messages of the page (`CONSOLE(line)] "message"`). */
  console: string[];
}

const BASE_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--hide-scrollbars",
  "--enable-logging=stderr",
  "--v=0",
];

export async function runChromium(workDir: string, page: string, flags: readonly string[]): Promise<ChromiumRun> {
  const profile = await mkdtemp(join(workDir, "chromium-profile-"));
  try {
    const args = [...BASE_FLAGS, `--user-data-dir=${profile}`, ...flags, pathToFileURL(page).href];
    return await new Promise<ChromiumRun>((resolve, reject) => {
      const child = spawn("chromium", args, { stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk) => (stdout += chunk));
      child.stderr.on("data", (chunk) => (stderr += chunk));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr, console: stderr.split("\n").filter((line) => /CONSOLE[(:]\d+\)?\]/.test(line)) }));
    });
  } finally {
    await rm(profile, { recursive: true, force: true });
  }
}

/** A PNG screenshot of the page at `width` × `height` CSS pixels. */
export function screenshot(workDir: string, page: string, png: string, width = 1400, height = 900): Promise<ChromiumRun> {
  return runChromium(workDir, page, [`--screenshot=${png}`, `--window-size=${width},${height}`]);
}

/** The DOM serialized after the page's scripts ran. */
export function dumpDom(workDir: string, page: string): Promise<ChromiumRun> {
  return runChromium(workDir, page, ["--dump-dom", "--virtual-time-budget=5000", "--window-size=1400,900"]);
}

/** Width and height from a PNG's IHDR chunk (throws if the bytes are not a PNG). */
export function pngSize(bytes: Uint8Array): { width: number; height: number } {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (!signature.every((b, i) => bytes[i] === b)) throw new Error("not a PNG");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}
