/**
 * The Iceberg peer's S3 jars (test/peers/iceberg-s3/pom.xml: iceberg-aws's S3FileIO and the AWS SDK
 * v2) in `.tools/iceberg-s3/lib`, copied there by Maven once per version of the pom, as
 * test/tools/iceberg-rest-env.ts does for the REST server's. Only the side-by-side benchmark's
 * Iceberg cells on emulated S3 need them, so only it asks.
 */
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const pom = join(root, "test", "peers", "iceberg-s3", "pom.xml");
const toolDir = join(root, ".tools", "iceberg-s3");
const libDir = join(toolDir, "lib");
const stampFile = join(toolDir, "lakewarden-pom.sha256");

const pomHash = (): string => createHash("sha256").update(readFileSync(pom)).digest("hex");

/** The jars' class path (`lib/*`), copied first when missing or made from another version of the pom. */
export function ensureIcebergS3Jars(log: (line: string) => void = () => {}): string {
  if (existsSync(stampFile) && readFileSync(stampFile, "utf8").trim() === pomHash()) return join(libDir, "*");
  rmSync(toolDir, { recursive: true, force: true });
  mkdirSync(toolDir, { recursive: true });
  log(`copying the jars of test/peers/iceberg-s3/pom.xml into ${libDir} with Maven`);
  // --strict-checksums: a jar whose checksum does not match Maven Central's fails the install.
  execFileSync("mvn", ["-q", "-B", "--strict-checksums", "-f", pom, "dependency:copy-dependencies", `-DoutputDirectory=${libDir}`], { stdio: ["ignore", "inherit", "inherit"] });
  writeFileSync(stampFile, `${pomHash()}\n`);
  return join(libDir, "*");
}
