/** `npm test`'s second step: the tests' Iceberg REST catalog server's jars (iceberg-rest-env.ts), fetched once per pom. */
import { ensureIcebergRest } from "./iceberg-rest-env.ts";

try {
  const started = Date.now();
  let installed = false;
  ensureIcebergRest((line) => {
    installed = true;
    console.error(`setup-iceberg-rest: ${line}`);
  });
  if (installed) console.error(`setup-iceberg-rest: ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
} catch (error) {
  console.error(`setup-iceberg-rest: ${(error as Error).message}`);
  process.exit(1);
}
