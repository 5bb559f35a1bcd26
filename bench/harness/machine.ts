/** The machine a result was measured on, printed at the head of every result file. */
import { cpus, totalmem, platform, release, arch } from "node:os";
import { createRequire } from "node:module";

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

function packageVersion(name: string): string {
  try {
    const require = createRequire(import.meta.url);
    return (require(`${name}/package.json`) as { version: string }).version;
  } catch {
    return "unknown";
  }
}

export function machineLine(machine: MachineInfo): string {
  return `${machine.cores} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB memory, Node ${machine.node}, ${machine.os}, @lancedb/lancedb ${machine.lancedb}`;
}
