/**
 * The project-local Python environment of the tests: `.tools/venv` at the repository root. Two locked
 * sets (every package, transitive ones too, pinned with its hashes; made by lock-python.ts):
 * - the tools `npm test` needs, requirements.txt -> requirements.lock, installed by its pretest step;
 * - the peers' extras (Spark with Delta, about 300 MB), requirements-peers.txt -> requirements-peers.lock,
 *   resolved against the first lock and installed on top of it only by `npm run test:peers`.
 * A stamp per set in the venv says it holds that lock; remaking the venv for a new first lock drops
 * the peers' stamp with it. Tests only ask for them (toolPython, peerPython).
 *
 * uv (pinned with its hashes in uv.txt, installed by pip into `.tools/uv`) does the installs: with
 * --require-hashes and no resolution it takes seconds where pip takes about a minute.
 */
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const toolsDir = join(root, "test", "tools");
const uvRequirementsFile = join(toolsDir, "uv.txt");
export const venvDir = join(root, ".tools", "venv");
const uvDir = join(root, ".tools", "uv");
const uvStampFile = join(uvDir, "lakewarden-uv.sha256");
/** The oldest Python the locks are resolved for (lock-python.ts) and the tests accept. */
export const MIN_PYTHON = "3.10";
/** A lock's first line names the requirements file it was made from. */
const LOCK_SOURCE_PREFIX = "# made from the requirements pins of sha256 ";

/** One locked set of packages: what is asked for, its lock, and the stamp in the venv saying it is installed. */
interface ToolSet {
  requirements: string;
  lock: string;
  stamp: string;
  /** The lock the set is resolved against and installed on top of. */
  base?: ToolSet;
}
const relative = (file: string): string => file.slice(root.length + 1);

const testTools: ToolSet = {
  requirements: join(toolsDir, "requirements.txt"),
  lock: join(toolsDir, "requirements.lock"),
  stamp: join(venvDir, "lakewarden-requirements.sha256"),
};
const peerTools: ToolSet = {
  requirements: join(toolsDir, "requirements-peers.txt"),
  lock: join(toolsDir, "requirements-peers.lock"),
  stamp: join(venvDir, "lakewarden-requirements-peers.sha256"),
  base: testTools,
};
export const requirementsFile = testTools.requirements;
export const lockFile = testTools.lock;
export const peerRequirementsFile = peerTools.requirements;
export const peerLockFile = peerTools.lock;

const sha256 = (file: string): string => createHash("sha256").update(readFileSync(file)).digest("hex");
/** The requirements without comments, blank lines or their order: a reworded comment leaves the lock current. */
function requirementsDigest(requirements: string): string {
  const pins = readFileSync(requirements, "utf8")
    .split("\n")
    .map((line) => line.replace(/#.*/, "").trim())
    .filter(Boolean)
    .sort();
  return createHash("sha256").update(pins.join("\n")).digest("hex");
}
const stampMatches = (stamp: string, hash: string): boolean => existsSync(stamp) && readFileSync(stamp, "utf8").trim() === hash;
const installed = (set: ToolSet): boolean => stampMatches(set.stamp, sha256(set.lock)) && (set.base === undefined || installed(set.base));

/** The venv's python with `npm test`'s tools, or an error saying in one line how to make it. */
export function toolPython(): string {
  const python = join(venvDir, "bin", "python");
  if (!existsSync(python) || !installed(testTools)) {
    throw new Error(`the tests' Python tools are not installed or out of date in ${venvDir}: run \`node test/tools/setup-python.ts\` (npm test does it first)`);
  }
  return python;
}

/** The venv's python with the peers' extras too (Spark with Delta), or an error saying in one line how to add them. */
export function peerPython(): string {
  const python = toolPython();
  if (!installed(peerTools)) {
    throw new Error(
      `the peers' Python tools (${relative(peerTools.lock)}) are not installed or out of date in ${venvDir}: run \`node test/tools/setup-python.ts --peers\` (npm run test:peers does it first)`,
    );
  }
  return python;
}

/** A console script the venv installed (moto_server, ...). */
export function toolBin(name: string): string {
  return join(dirname(toolPython()), name);
}

/**
 * Makes or refreshes the venv from requirements.lock, then with `peers` adds requirements-peers.lock
 * on top; each a no-op when its stamp matches. Returns the python path.
 */
export function ensurePythonTools(log: (line: string) => void = () => {}, options: { peers?: boolean } = {}): string {
  const python = join(venvDir, "bin", "python");
  if (!existsSync(python) || !installed(testTools)) {
    assertLockCurrent(testTools);
    const python3 = findPython3();
    const uv = ensureUv(python3, log);
    rmSync(venvDir, { recursive: true, force: true });
    log(`installing ${relative(testTools.lock)} into ${venvDir} with ${python3}`);
    execFileSync(uv, ["venv", "--quiet", "--python", python3, venvDir], { stdio: "inherit", env: uvEnv() });
    installLock(uv, python, testTools);
  }
  if (options.peers && !installed(peerTools)) {
    assertLockCurrent(peerTools);
    log(`installing ${relative(peerTools.lock)} into ${venvDir}`);
    installLock(ensureUv(findPython3(), log), python, peerTools);
  }
  return python;
}

function installLock(uv: string, python: string, set: ToolSet): void {
  // Bytecode now: the environment sets PYTHONDONTWRITEBYTECODE, so without it every moto_server
  // start compiles moto from source (4.5 s to listen instead of 1.2 s), in every test file.
  execFileSync(uv, ["pip", "install", "--quiet", "--compile-bytecode", "--python", python, "--require-hashes", "--no-deps", "-r", set.lock], { stdio: "inherit", env: uvEnv() });
  writeFileSync(set.stamp, `${sha256(set.lock)}\n`);
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

/**
 * Resolves requirements.txt into requirements.lock, then requirements-peers.txt into
 * requirements-peers.lock constrained by the first (so the peers' extras install on top of it
 * unchanged). All platforms, Python >= MIN_PYTHON, with hashes. A lock already there is the
 * resolver's preference: relocking after one pin changes moves only what that pin needs.
 */
export function lockPythonTools(log: (line: string) => void = () => {}): void {
  const uv = ensureUv(findPython3(), log);
  lockSet(uv, testTools);
  log(`wrote ${testTools.lock}`);
  lockSet(uv, peerTools);
  log(`wrote ${peerTools.lock}`);
}

function lockSet(uv: string, set: ToolSet): void {
  const scratch = mkdtempSync(join(tmpdir(), "lakewarden-lock-"));
  try {
    const output = join(scratch, "requirements.lock");
    if (existsSync(set.lock)) copyFileSync(set.lock, output);
    const constraints = set.base === undefined ? [] : ["--constraint", relative(set.base.lock)];
    execFileSync(
      uv,
      [
        "pip",
        "compile",
        "--quiet",
        "--generate-hashes",
        "--universal",
        "--python-version",
        MIN_PYTHON,
        "--no-header",
        ...constraints,
        "--output-file",
        output,
        relative(set.requirements),
      ],
      { cwd: root, stdio: ["ignore", "ignore", "inherit"], env: uvEnv() },
    );
    const header = [
      `${LOCK_SOURCE_PREFIX}${requirementsDigest(set.requirements)}`,
      `# Written by \`npm run tools:lock\` (test/tools/lock-python.ts) from ${basename(set.requirements)}: every package`,
      `# the tools need, pinned with its hashes. Do not edit by hand: change ${basename(set.requirements)}, run it again.`,
    ];
    writeFileSync(set.lock, `${header.join("\n")}\n${readFileSync(output, "utf8")}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Throws, in one line, when either lock was not made from its current requirements file. */
export function assertLocksCurrent(): void {
  assertLockCurrent(testTools);
  assertLockCurrent(peerTools);
}

/** The package names a lock pins (lowercase, as the lock spells them). */
export function lockedPackages(lock: string): Set<string> {
  return new Set([...readFileSync(lock, "utf8").matchAll(/^([a-z0-9][a-z0-9._-]*)==/gm)].map((match) => match[1]!));
}

function assertLockCurrent(set: ToolSet): void {
  const firstLine = readFileSync(set.lock, "utf8").split("\n", 1)[0] ?? "";
  if (firstLine !== `${LOCK_SOURCE_PREFIX}${requirementsDigest(set.requirements)}`) {
    throw new Error(`${relative(set.lock)} was not made from the current ${relative(set.requirements)}: run \`npm run tools:lock\` and commit both`);
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
