/**
 * The project-local Python environment of the tests: `.tools/venv` at the repository root, holding
 * exactly test/tools/requirements.lock (every package, transitive ones too, pinned with its hashes;
 * made from requirements.txt by lock-python.ts). A stamp of the lock's hash says the venv holds it.
 * `npm test` makes it first (the pretest step runs setup-python.ts); tests only ask for it.
 *
 * uv (pinned with its hashes in uv.txt, installed by pip into `.tools/uv`) does the install: with
 * --require-hashes and no resolution it takes seconds where pip takes about a minute.
 */
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const toolsDir = join(root, "test", "tools");
export const requirementsFile = join(toolsDir, "requirements.txt");
export const lockFile = join(toolsDir, "requirements.lock");
const uvRequirementsFile = join(toolsDir, "uv.txt");
export const venvDir = join(root, ".tools", "venv");
const uvDir = join(root, ".tools", "uv");
const stampFile = join(venvDir, "lakewarden-requirements.sha256");
const uvStampFile = join(uvDir, "lakewarden-uv.sha256");
/** The oldest Python the lock is resolved for (lock-python.ts) and the tests accept. */
export const MIN_PYTHON = "3.10";
/** The lock's first line names the requirements.txt it was made from. */
const LOCK_SOURCE_PREFIX = "# made from the requirements.txt pins of sha256 ";

const sha256 = (file: string): string => createHash("sha256").update(readFileSync(file)).digest("hex");
/** The requirements without comments, blank lines or their order: a reworded comment leaves the lock current. */
function requirementsDigest(): string {
  const pins = readFileSync(requirementsFile, "utf8")
    .split("\n")
    .map((line) => line.replace(/#.*/, "").trim())
    .filter(Boolean)
    .sort();
  return createHash("sha256").update(pins.join("\n")).digest("hex");
}
const stampMatches = (stamp: string, hash: string): boolean => existsSync(stamp) && readFileSync(stamp, "utf8").trim() === hash;

/** The venv's python, or an error saying in one line how to make it. */
export function toolPython(): string {
  const python = join(venvDir, "bin", "python");
  if (!existsSync(python) || !stampMatches(stampFile, sha256(lockFile))) {
    throw new Error(`the tests' Python tools are not installed or out of date in ${venvDir}: run \`node test/tools/setup-python.ts\` (npm test does it first)`);
  }
  return python;
}

/** A console script the venv installed (moto_server, ...). */
export function toolBin(name: string): string {
  return join(dirname(toolPython()), name);
}

/** Makes or refreshes the venv from the lock; a no-op when the stamp matches. Returns the python path. */
export function ensurePythonTools(log: (line: string) => void = () => {}): string {
  const python = join(venvDir, "bin", "python");
  const hash = sha256(lockFile);
  if (existsSync(python) && stampMatches(stampFile, hash)) return python;
  assertLockCurrent();
  const python3 = findPython3();
  const uv = ensureUv(python3, log);
  rmSync(venvDir, { recursive: true, force: true });
  log(`installing test/tools/requirements.lock into ${venvDir} with ${python3}`);
  execFileSync(uv, ["venv", "--quiet", "--python", python3, venvDir], { stdio: "inherit", env: uvEnv() });
  // Bytecode now: the environment sets PYTHONDONTWRITEBYTECODE, so without it every moto_server
  // start compiles moto from source (4.5 s to listen instead of 1.2 s), in every test file.
  execFileSync(uv, ["pip", "install", "--quiet", "--compile-bytecode", "--python", python, "--require-hashes", "--no-deps", "-r", lockFile], { stdio: "inherit", env: uvEnv() });
  writeFileSync(stampFile, `${hash}\n`);
  return python;
}

/** uv in its own small venv, installed by pip with the hashes of uv.txt. Returns the uv binary. */
export function ensureUv(python3: string = findPython3(), log: (line: string) => void = () => {}): string {
  const uv = join(uvDir, "bin", "uv");
  const hash = sha256(uvRequirementsFile);
  if (existsSync(uv) && stampMatches(uvStampFile, hash)) return uv;
  rmSync(uvDir, { recursive: true, force: true });
  log(`installing uv (test/tools/uv.txt) into ${uvDir}`);
  execFileSync(python3, ["-m", "venv", uvDir], { stdio: "inherit" });
  execFileSync(join(uvDir, "bin", "pip"), ["install", "--quiet", "--disable-pip-version-check", "--no-input", "--require-hashes", "--no-deps", "-r", uvRequirementsFile], {
    stdio: "inherit",
  });
  writeFileSync(uvStampFile, `${hash}\n`);
  return uv;
}

/** Resolves requirements.txt into requirements.lock (all platforms, Python >= MIN_PYTHON, with hashes). */
export function lockPythonTools(log: (line: string) => void = () => {}): void {
  const uv = ensureUv(findPython3(), log);
  const compile = (input: string): string =>
    execFileSync(uv, ["pip", "compile", "--quiet", "--generate-hashes", "--universal", "--python-version", MIN_PYTHON, "--no-header", input], { encoding: "utf8", env: uvEnv() });
  const header = [
    `${LOCK_SOURCE_PREFIX}${requirementsDigest()}`,
    "# Written by `npm run tools:lock` (test/tools/lock-python.ts) from requirements.txt: every package",
    "# the tools need, pinned with its hashes. Do not edit by hand: change requirements.txt, run it again.",
  ];
  writeFileSync(lockFile, `${header.join("\n")}\n${compile(requirementsFile)}`);
  log(`wrote ${lockFile}`);
}

function assertLockCurrent(): void {
  const firstLine = readFileSync(lockFile, "utf8").split("\n", 1)[0] ?? "";
  if (firstLine !== `${LOCK_SOURCE_PREFIX}${requirementsDigest()}`) {
    throw new Error("test/tools/requirements.lock was not made from the current test/tools/requirements.txt: run `npm run tools:lock` and commit both");
  }
}

/** uv keeps to the venv it is told about and says nothing unless asked. */
function uvEnv(): NodeJS.ProcessEnv {
  return { ...process.env, UV_NO_PROGRESS: "1", VIRTUAL_ENV: undefined, UV_PYTHON_DOWNLOADS: "never" };
}

function findPython3(): string {
  const [minMajor, minMinor] = MIN_PYTHON.split(".").map(Number) as [number, number];
  for (const candidate of ["python3", "python"]) {
    try {
      const version = execFileSync(candidate, ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"], { encoding: "utf8" }).trim();
      const [major, minor] = version.split(".").map(Number);
      if (major === minMajor && minor! >= minMinor) return candidate;
    } catch {
      // not this one
    }
  }
  throw new Error(`the tests need Python ${MIN_PYTHON} or newer as python3 on PATH (with its venv module) for delta-rs, pyiceberg, Lance and moto; none was found`);
}
