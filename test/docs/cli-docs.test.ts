/**
 * docs/cli.md is checked against `--help`: for every command, `lakewarden <command> --help` (run
 * in-process, the same program the executable runs) lists options and arguments, and the command's own section of docs/cli.md
 * (from its `## lakewarden <command>` heading to the next heading) names each of them. Every
 * relative link in the README and docs/ points at a file that exists, and every `#anchor` at a
 * heading of that file.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI_DOC = readFileSync(join(ROOT, "docs", "cli.md"), "utf8");

const helps = new Map<string, string>();
async function help(path: readonly string[]): Promise<string> {
  const id = path.join(" ");
  if (!helps.has(id)) {
    const io = new BufferIO();
    if ((await runCli([...path, "--help"], io)) !== 0) throw new Error(`lakewarden ${id} --help failed: ${io.stderr}`);
    helps.set(id, io.stdout);
  }
  return helps.get(id)!;
}

/** The commands `--help` lists (`head write`, ...): those with subcommands are walked, not checked. */
async function leafCommands(path: readonly string[] = []): Promise<string[][]> {
  const text = await help(path);
  const block = text.split("\nCommands:\n")[1];
  if (!block) return path.length === 0 ? [] : [[...path]];
  const names = [...block.split("\n\n")[0]!.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1]!).filter((n) => n !== "help");
  return (await Promise.all(names.map((name) => leafCommands([...path, name])))).flat();
}

/** Option flags (`--since`, `-o`) and arguments (`<table>`) in a command's --help. */
function helpEntries(text: string): string[] {
  const entries: string[] = [];
  const usage = /^Usage: lakewarden [a-z -]+?\[options\]((?: \S+)*)$/m.exec(text)?.[1] ?? "";
  for (const m of usage.matchAll(/[<[]([a-z=-]+)(?:\.\.\.)?[>\]]/g)) entries.push(`<${m[1]}`);
  const options = text.split("\nOptions:\n")[1]?.split("\n\n")[0] ?? "";
  for (const m of options.matchAll(/^ {2}((?:-\w, )?--[a-z-]+)/gm)) {
    for (const flag of m[1]!.split(", ")) if (flag !== "--help" && flag !== "-h") entries.push(flag);
  }
  return entries;
}

function section(command: string): string | null {
  const lines = CLI_DOC.split("\n");
  const start = lines.findIndex((line) => new RegExp(`^#{2,3} lakewarden ${command}$`).test(line));
  if (start === -1) return null;
  const end = lines.findIndex((line, i) => i > start && /^#{1,3} /.test(line));
  return lines.slice(start, end === -1 ? undefined : end).join("\n");
}

const commands = await leafCommands();

describe("docs/cli.md against --help", () => {
  it("finds every command --help lists", () => {
    expect(commands.map((c) => c.join(" "))).toEqual(expect.arrayContaining(["versions", "head write", "cleanup", "config set", "pins list", "serve"]));
    expect(commands.length).toBeGreaterThanOrEqual(17);
  });

  it.each(commands.map((c) => [c.join(" ")]))("lakewarden %s: its section names every option and argument --help lists", async (command) => {
    const text = section(command);
    expect(text, `no "## lakewarden ${command}" section in docs/cli.md`).not.toBeNull();
    const entries = helpEntries(await help(command.split(" ")));
    expect(entries.length).toBeGreaterThan(0);
    // An option as the docs write it: `--since <version>`, or `-o, --output <file>`.
    const named = (entry: string) => (entry.startsWith("<") ? text!.includes(entry) : text!.includes(`\`${entry}`) || text!.includes(`, ${entry}`));
    const missing = entries.filter((entry) => !named(entry));
    expect(missing).toEqual([]);
  });
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

describe("links in the README and docs/", () => {
  const files = [
    "README.md",
    ...readdirSync(join(ROOT, "docs"))
      .filter((n) => n.endsWith(".md"))
      .map((n) => `docs/${n}`),
  ];

  it.each(files)("%s: every relative link and anchor resolves", (file) => {
    const text = readFileSync(join(ROOT, file), "utf8").replace(/```[\s\S]*?```/g, "");
    const broken: string[] = [];
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/.test(target)) continue;
      const [path, anchor] = target.split("#") as [string, string | undefined];
      const resolved = path === "" ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), path);
      if (!existsSync(resolved)) {
        broken.push(target);
        continue;
      }
      if (anchor && resolved.endsWith(".md")) {
        const headings = readFileSync(resolved, "utf8")
          .replace(/```[\s\S]*?```/g, "")
          .split("\n")
          .filter((l) => /^#+ /.test(l))
          .map((l) => anchorOf(l.replace(/^#+ /, "")));
        if (!headings.includes(anchor)) broken.push(target);
      }
    }
    expect(broken).toEqual([]);
  });
});
