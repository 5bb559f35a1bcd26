/**
 * The tests' Iceberg REST catalog server's jars (test/tools/iceberg-rest/pom.xml) in
 * `.tools/iceberg-rest/lib`, copied there by Maven once per version of the pom (a stamp of its
 * hash says which). `npm test` makes them first (the pretest step runs setup-iceberg-rest.ts);
 * tests only ask for them.
 */
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const pom = join(root, "test", "tools", "iceberg-rest", "pom.xml");
const toolDir = join(root, ".tools", "iceberg-rest");
const libDir = join(toolDir, "lib");
const stampFile = join(toolDir, "lakewarden-pom.sha256");

const pomHash = (): string => createHash("sha256").update(readFileSync(pom)).digest("hex");
const current = (): boolean => existsSync(stampFile) && readFileSync(stampFile, "utf8").trim() === pomHash();

/** The server's class path (`lib/*`), or an error saying in one line how to make it. */
export function icebergRestClassPath(): string {
  if (!current())
    throw new Error(`the tests' Iceberg REST catalog server is not installed or out of date in ${libDir}: run \`node test/tools/setup-iceberg-rest.ts\` (npm test does it first)`);
  return join(libDir, "*");
}

/** Copies the pom's jars into .tools/iceberg-rest/lib; a no-op when the stamp matches. */
export function ensureIcebergRest(log: (line: string) => void = () => {}): string {
  if (current()) return join(libDir, "*");
  rmSync(toolDir, { recursive: true, force: true });
  mkdirSync(toolDir, { recursive: true });
  log(`copying the jars of test/tools/iceberg-rest/pom.xml into ${libDir} with Maven`);
  // --strict-checksums: a jar whose checksum does not match Maven Central's fails the install.
  execFileSync("mvn", ["-q", "-B", "--strict-checksums", "-f", pom, "dependency:copy-dependencies", `-DoutputDirectory=${libDir}`], { stdio: ["ignore", "inherit", "inherit"] });
  writeFileSync(stampFile, `${pomHash()}\n`);
  return join(libDir, "*");
}
