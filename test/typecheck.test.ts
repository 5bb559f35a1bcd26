/**
 * The project has no build step (Node runs the TypeScript directly), so nothing else would
 * notice a type error: the suite runs the compiler over every source and test file.
 */
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { promisify } from "node:util";
import { expect, it } from "vitest";

it("type-checks the whole project with tsc --noEmit (strict)", async () => {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const run = await promisify(execFile)(process.execPath, [tsc, "--noEmit", "-p", "."], {
    cwd: new URL("..", import.meta.url),
  }).then(
    () => ({ code: 0, output: "" }),
    (error: { code?: number; stdout?: string }) => ({ code: error.code ?? 1, output: error.stdout ?? "" }),
  );
  expect(run.output).toBe("");
  expect(run.code).toBe(0);
});
