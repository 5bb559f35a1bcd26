/**
 * Transaction operation names as Lance itself prints them (`Operation::name()` in
 * rust/lance/src/dataset/transaction.rs), keyed by the proto oneof case.
 */
const OPERATION_NAMES: Readonly<Record<string, string>> = {
  append: "Append",
  delete: "Delete",
  overwrite: "Overwrite",
  create_index: "CreateIndex",
  rewrite: "Rewrite",
  merge: "Merge",
  restore: "Restore",
  reserve_fragments: "ReserveFragments",
  update: "Update",
  project: "Project",
  update_config: "UpdateConfig",
  data_replacement: "DataReplacement",
  update_mem_wal_state: "UpdateMemWalState",
  clone: "Clone",
  update_bases: "UpdateBases",
  data_overlay: "DataOverlay",
  composite_operation: "CompositeOperation",
};

/** Lance's name for a oneof case; null when no case we know is set (a newer writer's operation). */
export function operationName(oneofCase: string | undefined): string | null {
  return oneofCase === undefined ? null : (OPERATION_NAMES[oneofCase] ?? null);
}
