/** CDK apps for tests: the project's cdk.json context (feature flags), bundling skipped unless asked. */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { PROJECT_ROOT } from "../../infra/function-bundling.ts";
import { LakewardenStack, type LakewardenStackProps } from "../../infra/lakewarden-stack.ts";

export function projectContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(join(PROJECT_ROOT, "cdk.json"), "utf8")) as { context: Record<string, unknown> };
  return cdkJson.context;
}

/**
 * A synthesized LakewardenStack without running esbuild ('aws:cdk:bundling-stacks': []). The
 * cloud assembly goes to a folder of its own that is removed once the template is read (an App
 * without `outdir` leaves a `cdk.out*` folder in the temp dir on every synth).
 */
export function synthStack(props: Omit<LakewardenStackProps, "env">): { stack: LakewardenStack; template: Template } {
  const outdir = mkdtempSync(join(tmpdir(), "lw-cdk-test-"));
  try {
    const app = new App({ outdir, context: { ...projectContext(), "aws:cdk:bundling-stacks": [] } });
    const stack = new LakewardenStack(app, "Test", props);
    return { stack, template: Template.fromStack(stack) };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** Renders a CloudFormation value to text: Fn::Join joined, GetAtt/Ref as <Name.Attr>/<Name>. */
export function render(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(render).join(",");
  if (typeof value === "object" && value !== null) {
    const object = value as Record<string, unknown>;
    if ("Fn::Join" in object) {
      const [separator, parts] = object["Fn::Join"] as [string, unknown[]];
      return parts.map(render).join(separator);
    }
    if ("Fn::GetAtt" in object) return `<${(object["Fn::GetAtt"] as string[]).join(".")}>`;
    if ("Ref" in object) return `<${String(object.Ref)}>`;
  }
  return JSON.stringify(value);
}

export interface PolicyStatementJson {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

/** Every statement of every IAM policy in the template, with the policy's logical ID. */
export function policyStatements(template: Template): { policy: string; statement: PolicyStatementJson }[] {
  const out: { policy: string; statement: PolicyStatementJson }[] = [];
  for (const [policy, resource] of Object.entries(template.findResources("AWS::IAM::Policy"))) {
    const document = (resource as { Properties: { PolicyDocument: { Statement: PolicyStatementJson[] } } }).Properties.PolicyDocument;
    for (const statement of document.Statement) out.push({ policy, statement });
  }
  return out;
}

export function asList<T>(value: T | T[]): T[] {
  return Array.isArray(value) ? value : [value];
}
