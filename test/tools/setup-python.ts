/** `npm test`'s first step: the tests' Python tools in .tools/venv (python-env.ts), made once per requirements file. */
import { ensurePythonTools } from "./python-env.ts";

try {
  const started = Date.now();
  const python = ensurePythonTools((line) => console.error(`setup-python: ${line}`));
  const took = Date.now() - started;
  if (took > 1000) console.error(`setup-python: ready in ${(took / 1000).toFixed(1)} s (${python})`);
} catch (error) {
  console.error(`setup-python: ${(error as Error).message}`);
  process.exit(1);
}
