/**
 * The README's catalog deploy examples (the shell block after `<!-- deploy: catalogs -->`), taken
 * as the CDK app takes them: each `npx cdk deploy` line's `-c key=value` pairs become context,
 * settingsFromContext reads them as infra/app.ts does, and the stack is synthesized from those
 * settings (bundling skipped). Each must synthesize and grant what docs/deploy.md says it does.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../infra/function-bundling.ts";
import { settingsFromContext } from "../../infra/settings.ts";
import { asList, policyStatements, render, synthStack } from "../infra/cdk-app.ts";

/** Shell words of one command line: single and double quotes, no expansions (the block uses none). */
function words(line: string): string[] {
  const out: string[] = [];
  const pattern = /'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g;
  let current = "";
  let last = -1;
  for (const match of line.matchAll(pattern)) {
    const text = match[1] ?? match[2]?.replace(/\\(.)/g, "$1") ?? match[3]!;
    // Pieces with no space between them are one word.
    if (match.index === last) current += text;
    else {
      if (last !== -1) out.push(current);
      current = text;
    }
    last = match.index + match[0].length;
  }
  if (last !== -1) out.push(current);
  return out;
}

async function deployCommands(): Promise<Record<string, string>[]> {
  const readme = await readFile(join(PROJECT_ROOT, "README.md"), "utf8");
  const block = /<!-- deploy: catalogs -->\s*```sh\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error("README.md has no shell block after <!-- deploy: catalogs -->");
  const lines = block
    .replace(/\\\n\s*/g, " ")
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.trim().startsWith("#"));
  return lines.map((line) => {
    const argv = words(line);
    expect(argv.slice(0, 3), line).toEqual(["npx", "cdk", "deploy"]);
    const context: Record<string, string> = {};
    for (let i = 3; i < argv.length; i++) {
      expect(argv[i], line).toBe("-c");
      const pair = argv[++i]!;
      const at = pair.indexOf("=");
      context[pair.slice(0, at)] = pair.slice(at + 1);
    }
    return context;
  });
}

describe("README deploy examples for catalog-owned tables", () => {
  it("the Glue example grants cleanup-table GetTable and UpdateTable on its table; the REST example grants the functions its secret alone", async () => {
    const commands = await deployCommands();
    expect(commands).toHaveLength(2);
    const [glue, rest] = commands.map((context) => synthStack({ settings: settingsFromContext((key) => context[key]) }).template);

    const glueStatements = policyStatements(glue!).filter(({ statement }) => asList(statement.Action).includes("glue:UpdateTable"));
    expect(glueStatements).toHaveLength(1);
    expect(glueStatements[0]!.policy).toContain("CleanupTable");
    expect(asList(glueStatements[0]!.statement.Resource as unknown).map(render)).toContain("arn:<AWS::Partition>:glue:<AWS::Region>:<AWS::AccountId>:table/sales/orders");

    const secretStatements = policyStatements(rest!).filter(({ statement }) => asList(statement.Action).includes("secretsmanager:GetSecretValue"));
    expect(secretStatements).toHaveLength(2);
    for (const { statement } of secretStatements) {
      expect(asList(statement.Resource as unknown).map(render)).toEqual(["arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:lakewarden/polaris-??????"]);
    }
    const variables = Object.values(rest!.findResources("AWS::Lambda::Function"))
      .map((fn) => (fn as { Properties: { Environment?: { Variables?: Record<string, unknown> } } }).Properties.Environment?.Variables ?? {})
      .filter((vars) => vars.LAKEWARDEN_CATALOG_TABLES !== undefined);
    expect(variables).toHaveLength(2);
    for (const vars of variables) {
      expect(Object.values(JSON.parse(render(vars.LAKEWARDEN_CATALOG_TABLES)) as object)).toEqual([
        { uri: "https://polaris.example.com/api/catalog", warehouse: "lake", namespace: ["web"], table: "events", credentialsSecret: "lakewarden/polaris" },
      ]);
    }
  }, 60_000);
});
