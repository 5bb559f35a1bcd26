/** `npm run tools:lock`: writes test/tools/requirements.lock from requirements.txt (run it after changing requirements.txt; commit both). */
import { lockPythonTools } from "./python-env.ts";

try {
  lockPythonTools((line) => console.error(`lock-python: ${line}`));
} catch (error) {
  console.error(`lock-python: ${(error as Error).message}`);
  process.exit(1);
}
