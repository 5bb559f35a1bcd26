/**
 * `lakewarden lease show <table>` and `lakewarden lease break <table> [--force]`: the cleanup
 * lease (`_lakewarden/lease`) for people recovering from a cleanup that died holding it.
 */
import type { Command } from "commander";
import type { ProgramContext } from "../program.ts";
import { printJson, runOnTable, withOutputOptions, TABLE_ARGUMENT_HELP } from "../table-command.ts";
import type { OutputOptions } from "../table-command.ts";
import { LEASE_KEY, breakLease, inspectLease } from "../../maintenance/lease.ts";
import type { LeaseInspection } from "../../maintenance/lease.ts";

interface BreakOptions extends OutputOptions {
  force?: boolean;
}

export function registerLeaseCommand(program: Command, { io }: ProgramContext): void {
  const lease = program.command("lease").description(`the cleanup lease (${LEASE_KEY}): who holds it, and releasing it`);

  withOutputOptions(lease.command("show").description("who holds the cleanup lease, until when, and whether it still runs").argument("<table>", TABLE_ARGUMENT_HELP)).action(
    async (table: string, options: OutputOptions) => {
      const inspection = await runOnTable(table, options, io, (store) => inspectLease(store));
      if (options.json) printJson(io, inspectionJson(inspection));
      else io.out(`${inspection.description}\n`);
    },
  );

  withOutputOptions(
    lease
      .command("break")
      .description("release a lease whose holder is gone, so the next cleanup starts")
      .argument("<table>", TABLE_ARGUMENT_HELP)
      .option("--force", "release it even when its holder may still run"),
  ).action(async (table: string, options: BreakOptions) => {
    const result = await runOnTable(table, options, io, (store) => breakLease(store, { force: Boolean(options.force) }));
    if (options.json) printJson(io, { broken: result.broken, before: inspectionJson(result.before) });
    else io.out(result.broken ? `lease released; it was ${result.before.description}\n` : `nothing to break: ${result.before.description}\n`);
  });
}

function inspectionJson(inspection: LeaseInspection) {
  return { state: inspection.state, description: inspection.description, lease: inspection.record };
}
