/**
 * A Node 20 binary for the tests that check what runs on the oldest Node package.json's
 * `engines` allow (the installed package, the Node 20 wrapper of lib/cli/bin.js): the first
 * `node` of major version 20 among PATH's folders (what `which -a node` lists; the project's
 * Node 22 from node_modules/.bin comes first there and is passed over), or null when there is none.
 */
import { execFile } from "node:child_process";
import { access, constants } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";

const exec = promisify(execFile);

export async function findNode20(): Promise<string | null> {
  const folders = (process.env.PATH ?? "").split(delimiter).filter(Boolean);
  for (const candidate of new Set(folders.map((folder) => join(folder, "node")))) {
    const runnable = await access(candidate, constants.X_OK).then(
      () => true,
      () => false,
    );
    if (!runnable) continue;
    const version = await exec(candidate, ["--version"]).then(
      (r) => r.stdout.trim(),
      () => "",
    );
    if (version.startsWith("v20.")) return candidate;
  }
  return null;
}
