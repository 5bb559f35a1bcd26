/**
 * The package's API is chosen: lib/index.ts names what users import, the `exports` map gives
 * nothing else, and etc/lakewarden.api.md (written by `npm run api:update`) says what it is, so a
 * change to the API shows in review instead of slipping through.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { REPORT, ROOT, apiReport } from "../tools/api-report.ts";

it("etc/lakewarden.api.md is the API lib/index.ts exports (npm run api:update refreshes it)", () => {
  const checkedIn = readFileSync(REPORT, "utf8");
  expect(apiReport(), "the API changed: run npm run api:update and commit etc/lakewarden.api.md if the change is meant").toBe(checkedIn);
});

it("the package exports lib/index.ts (compiled to dist/index) and nothing deeper", () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { main: string; types: string; exports: Record<string, unknown> };
  expect(manifest.exports).toEqual({ ".": { types: "./dist/index.d.ts", default: "./dist/index.js" }, "./package.json": "./package.json" });
  expect({ main: manifest.main, types: manifest.types }).toEqual({ main: "./dist/index.js", types: "./dist/index.d.ts" });
  const build = JSON.parse(readFileSync(join(ROOT, "tsconfig.build.json"), "utf8")) as { compilerOptions: { rootDir: string; outDir: string } };
  expect(build.compilerOptions).toMatchObject({ rootDir: "lib", outDir: "dist" });
});
