/** The machine a result was measured on, printed at the head of every result file. */
import { cpus, totalmem, platform, release, arch } from "node:os";
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";

export interface MachineInfo {
  cores: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  os: string;
  lancedb: string;
}

export function describeMachine(): MachineInfo {
  const cpuList = cpus();
  return {
    cores: cpuList.length,
    cpuModel: cpuList[0]?.model.trim() ?? "unknown",
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    os: `${platform()} ${release()} ${arch()}`,
    lancedb: packageVersion("@lancedb/lancedb"),
  };
}

/** The installed version of a package (its exports map may hide package.json: walk up from its entry). */
function packageVersion(name: string): string {
  try {
    let dir = dirname(createRequire(import.meta.url).resolve(name));
    for (;;) {
      try {
        const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string; version?: string };
        if (manifest.name === name && manifest.version) return manifest.version;
      } catch {
        // no package.json at this level
      }
      const parent = dirname(dir);
      if (parent === dir) return "unknown";
      dir = parent;
    }
  } catch {
    return "unknown";
  }
}

/** One short line for chart captions. */
export function machineShort(machine: MachineInfo): string {
  return `${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}, LanceDB ${machine.lancedb}`;
}

export function machineLine(machine: MachineInfo): string {
  return `${machine.cores} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB memory, Node ${machine.node}, ${machine.os}, @lancedb/lancedb ${machine.lancedb}`;
}
