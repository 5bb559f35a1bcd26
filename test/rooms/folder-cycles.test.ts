/**
 * The rooms of lib/ depend on one another in one direction only: a circle between folders
 * (maintenance importing storage importing maintenance) means neither can be read, tested or
 * moved alone. The failure names every import that closes the circle.
 */
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { folderCycles, folderEdges } from "./folder-graph.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const edges = folderEdges(ROOT);

it("no two folders of lib/ import each other, directly or round a circle", () => {
  expect(folderCycles(edges)).toEqual([]);
});

it("lib/ imports nothing of the repository outside lib/ (not functions/, infra/, test/ or bench/)", () => {
  expect(edges.filter((edge) => edge.to === "(outside lib)").flatMap((edge) => edge.imports)).toEqual([]);
});

it("a format's folder imports no other format's folder", () => {
  const between = edges.filter((edge) => edge.from.startsWith("formats/") && edge.to.startsWith("formats/"));
  expect(between.flatMap((edge) => edge.imports)).toEqual([]);
});

it("nothing in lib/ imports the package's entry point (lib/index.ts)", () => {
  expect(edges.filter((edge) => edge.to === "(entry)").flatMap((edge) => edge.imports)).toEqual([]);
});

it("finds a circle when there is one (the check can fail)", () => {
  const made = [
    { from: "a", to: "b", imports: ["lib/a/x.ts -> lib/b/y.ts"] },
    { from: "b", to: "c", imports: ["lib/b/y.ts -> lib/c/z.ts"] },
    { from: "c", to: "a", imports: ["lib/c/z.ts -> lib/a/x.ts"] },
    { from: "c", to: "d", imports: ["lib/c/z.ts -> lib/d/w.ts"] },
  ];
  expect(folderCycles(made)).toEqual([{ rooms: ["a", "b", "c"], imports: ["lib/a/x.ts -> lib/b/y.ts", "lib/b/y.ts -> lib/c/z.ts", "lib/c/z.ts -> lib/a/x.ts"] }]);
});
