/**
 * The project-local Python environment of the tests: `.tools/venv` at the repository root,
 * holding exactly test/tools/requirements.txt (a stamp of the file's hash says it does).
 * `npm test` makes it first (the pretest step runs setup-python.ts); tests only ask for it.
 */
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const requirementsFile = join(root, "test", "tools", "requirements.txt");
export const venvDir = join(root, ".tools", "venv");
const stampFile = join(venvDir, "lakewarden-requirements.sha256");

function requirementsHash(): string {
  return createHash("sha256").update(readFileSync(requirementsFile)).digest("hex");
}

/** The venv's python, or an error saying in one line how to make it. */
export function toolPython(): string {
  const python = join(venvDir, "bin", "python");
  if (!existsSync(python) || !existsSync(stampFile) || readFileSync(stampFile, "utf8").trim() !== requirementsHash()) {
    throw new Error(`the tests' Python tools are not installed or out of date in ${venvDir}: run \`node test/tools/setup-python.ts\` (npm test does it first)`);
  }
  return python;
}

/** A console script the venv installed (moto_server, ...). */
export function toolBin(name: string): string {
  return join(dirname(toolPython()), name);
}

/** Makes or refreshes the venv; a no-op when the stamp matches. Returns the python path. */
export function ensurePythonTools(log: (line: string) => void = () => {}): string {
  const hash = requirementsHash();
  if (existsSync(stampFile) && readFileSync(stampFile, "utf8").trim() === hash) return join(venvDir, "bin", "python");
  const python3 = findPython3();
  rmSync(venvDir, { recursive: true, force: true });
  log(`making ${venvDir} with ${python3}`);
  execFileSync(python3, ["-m", "venv", venvDir], { stdio: "inherit" });
  const pip = join(venvDir, "bin", "pip");
  execFileSync(pip, ["install", "--quiet", "--disable-pip-version-check", "--no-input", "-r", requirementsFile], { stdio: "inherit" });
  writeFileSync(stampFile, `${hash}\n`);
  return join(venvDir, "bin", "python");
}

function findPython3(): string {
  for (const candidate of ["python3", "python"]) {
    try {
      const version = execFileSync(candidate, ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"], { encoding: "utf8" }).trim();
      const [major, minor] = version.split(".").map(Number);
      if (major === 3 && minor! >= 10) return candidate;
    } catch {
      // not this one
    }
  }
  throw new Error("the tests need Python 3.10 or newer as python3 on PATH (with its venv module) for delta-rs, pyiceberg, Lance and moto; none was found");
}
