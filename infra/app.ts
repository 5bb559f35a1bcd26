/**
 * The CDK app (`npx cdk synth`, `npx cdk deploy`). Settings come from context: cdk.json or
 * `-c lakewarden:<setting>=<value>`; see settings.ts for each one. Environment-agnostic on
 * purpose, so synth needs no credentials and no network.
 */
import { App } from "aws-cdk-lib";
import { LakewardenStack } from "./lakewarden-stack.ts";
import { InvalidSettingError, settingsFromContext } from "./settings.ts";

const app = new App();
try {
  const context = (key: string): unknown => app.node.tryGetContext(key);
  const stackName = context("lakewarden:stackName");
  const bucketName = context("lakewarden:bucketName");
  const alarmEmail = context("lakewarden:alarmEmail");
  const alarmTopicArn = context("lakewarden:alarmTopicArn");
  new LakewardenStack(app, typeof stackName === "string" && stackName !== "" ? stackName : "Lakewarden", {
    settings: settingsFromContext(context),
    bucketName: typeof bucketName === "string" && bucketName !== "" ? bucketName : undefined,
    alarmEmail: typeof alarmEmail === "string" && alarmEmail !== "" ? alarmEmail : undefined,
    alarmTopicArn: typeof alarmTopicArn === "string" && alarmTopicArn !== "" ? alarmTopicArn : undefined,
    description: "lakewarden: head objects on commit, scheduled cleanup of lakehouse tables",
  });
  app.synth();
} catch (error) {
  if (!(error instanceof InvalidSettingError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
