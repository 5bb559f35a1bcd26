/**
 * `npm test`'s first step: the tests' Python tools in .tools/venv (python-env.ts), made once per lock
 * file. With `--peers` (`npm run test:peers`) it adds the peer comparisons' extras (Spark) on top.
 */
import { ensurePythonTools } from "./python-env.ts";

try {
  const started = Date.now();
  let installed = false;
  const python = ensurePythonTools(
    (line) => {
      installed = true;
      console.error(`setup-python: ${line}`);
    },
    { peers: process.argv.includes("--peers") },
  );
  if (installed) console.error(`setup-python: ready in ${((Date.now() - started) / 1000).toFixed(1)} s (${python})`);
} catch (error) {
  console.error(`setup-python: ${(error as Error).message}`);
  process.exit(1);
}
