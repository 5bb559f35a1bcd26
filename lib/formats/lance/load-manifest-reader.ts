/**
 * The manifest reading and decoding modules (and protobufjs with them), loaded with the first
 * manifest a process reads: a deployment with no Lance table, or a function that never reads a
 * manifest (the cleanup scheduler detects formats by listing), never loads them.
 */
type ManifestReader = typeof import("./manifest-reader.ts") & Pick<typeof import("./manifest-file.ts"), "readManifestFile">;

let load: Promise<ManifestReader> | null = null;

export function loadManifestReader(): Promise<ManifestReader> {
  return (load ??= Promise.all([import("./manifest-reader.ts"), import("./manifest-file.ts")]).then(([reader, file]) => ({ ...reader, readManifestFile: file.readManifestFile })));
}
