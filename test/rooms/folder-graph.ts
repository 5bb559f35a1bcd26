/**
 * The folders ("rooms") of lib/ and which of them import which, read from the TypeScript
 * sources with the compiler's own import scanner (type-only imports and re-exports count: they
 * are a dependency of meaning all the same). A room is a first-level folder of lib/ (`lib/head`,
 * `lib/formats`, ...); `lib/index.ts` is the room "(entry)". A format's folder
 * (`lib/formats/lance`) is a room of its own too, so formats can be checked never to import each
 * other, and so is the registry (`lib/formats/index.ts`, and `catalog.ts` which asks every format
 * through it): it names every format, above them, while
 * the formats build on the interface and errors beside it in `lib/formats/`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";

export interface FolderEdge {
  from: string;
  to: string;
  /** "file -> file" lines, relative to the repository root, that make the edge. */
  imports: string[];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(entry.name) && !/\.test\.ts$/.test(entry.name) ? [path] : [];
  });
}

/** The files that ask every format (the registry and the catalog pointer's lookup through it). */
const REGISTRY = [join("formats", "index.ts"), join("formats", "catalog.ts"), join("formats", "version-folders.ts")];

/** The room a file under lib/ lives in. */
export function roomOf(libRelative: string): string {
  const parts = libRelative.split(sep);
  if (parts.length === 1) return "(entry)";
  if (REGISTRY.includes(libRelative)) return "formats (registry)";
  if (parts[0] === "formats" && parts.length > 2) return `formats/${parts[1]}`;
  return parts[0]!;
}

/** Every import between two different rooms of `<root>/lib`, grouped by (from, to). */
export function folderEdges(root: string): FolderEdge[] {
  const lib = join(root, "lib");
  const edges = new Map<string, FolderEdge>();
  for (const file of sourceFiles(lib)) {
    const from = roomOf(relative(lib, file));
    for (const imported of ts.preProcessFile(readFileSync(file, "utf8"), true, true).importedFiles) {
      if (!imported.fileName.startsWith(".")) continue;
      const target = resolve(dirname(file), imported.fileName);
      const inLib = relative(lib, target);
      if (inLib.startsWith("..")) {
        const key = `${from}\0(outside lib)`;
        const edge = edges.get(key) ?? { from, to: "(outside lib)", imports: [] };
        edge.imports.push(`${relative(root, file)} -> ${relative(root, target)}`);
        edges.set(key, edge);
        continue;
      }
      const to = roomOf(inLib);
      if (to === from) continue;
      const key = `${from}\0${to}`;
      const edge = edges.get(key) ?? { from, to, imports: [] };
      edge.imports.push(`${relative(root, file)} -> ${relative(root, target)}`);
      edges.set(key, edge);
    }
  }
  return [...edges.values()].sort((a, b) => a.from.localeCompare(b.from) || a.to.localeCompare(b.to));
}

/**
 * The rooms that depend on one another in a circle (the strongly connected components of more
 * than one room, Tarjan's algorithm), each sorted, with the imports that close the circle.
 */
export function folderCycles(edges: readonly FolderEdge[]): { rooms: string[]; imports: string[] }[] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) {
    next.set(from, [...(next.get(from) ?? []), to]);
    if (!next.has(to)) next.set(to, []);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (room: string): void => {
    index.set(room, index.size);
    low.set(room, index.get(room)!);
    stack.push(room);
    onStack.add(room);
    for (const to of next.get(room)!) {
      if (!index.has(to)) {
        visit(to);
        low.set(room, Math.min(low.get(room)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(room, Math.min(low.get(room)!, index.get(to)!));
      }
    }
    if (low.get(room) !== index.get(room)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== room);
    if (component.length > 1) components.push(component.sort());
  };
  for (const room of [...next.keys()].sort()) if (!index.has(room)) visit(room);
  return components.map((rooms) => ({
    rooms,
    imports: edges.filter((edge) => rooms.includes(edge.from) && rooms.includes(edge.to)).flatMap((edge) => edge.imports),
  }));
}
