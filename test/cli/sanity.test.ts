import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { runCli } from "../../lib/cli/run-cli.ts";
import { BufferIO } from "../../lib/cli/io.ts";

const SUBCOMMANDS = [
  ["versions"],
  ["head", "write"],
  ["head", "show"],
  ["cleanup"],
  ["checkpoint"],
  ["version-at"],
  ["lease", "show"],
  ["lease", "break"],
  ["config", "show"],
  ["config", "set"],
  ["config", "unset"],
  ["serve"],
  ["pin"],
  ["pins", "list"],
  ["unpin"],
  ["storage"],
  ["report"],
];

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

describe("lakewarden CLI", () => {
  it("prints help naming its commands, the exit statuses and the environment", async () => {
    const help = await cli("--help");
    expect(help.code).toBe(0);
    for (const command of ["versions", "head", "cleanup", "checkpoint", "version-at", "lease", "config", "serve", "pin", "pins", "unpin", "storage", "report"])
      expect(help.stdout).toContain(`  ${command}`);
    expect(help.stdout).toMatch(
      /Exit status:\n {2}0 +ok\n {2}1 +runtime failure.*\n {2}2 +usage error.*\n {2}3 +.*lease.*\n {2}4 +.*checkpoint or archive segment.*\n {2}130 +interrupted/,
    );
    expect(help.stdout).toContain("LAKEWARDEN_S3_REQUEST_TIMEOUT");
  });

  it("--version prints the package's version", async () => {
    const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    const version = await cli("--version");
    expect(version).toEqual({ code: 0, stdout: `${manifest.version}\n`, stderr: "" });
  });

  it.each(SUBCOMMANDS)("%s %s --help lists --verbose and the exit statuses", async (...path) => {
    const help = await cli(...path.filter(Boolean), "--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--verbose");
    expect(help.stdout).toContain("Exit status:");
  });

  it("usage errors exit 2: an unknown flag, a missing argument, an unknown command", async () => {
    const unknown = await cli("versions", "--bogus");
    expect(unknown).toEqual({ code: 2, stdout: "", stderr: "lakewarden: unknown option '--bogus' (run with --help for usage)\n" });
    expect((await cli("versions")).code).toBe(2);
    expect((await cli("vresions", "t")).code).toBe(2);
  });
});
