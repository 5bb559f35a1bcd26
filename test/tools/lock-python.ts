/** `npm run tools:lock`: writes test/tools/requirements.lock from requirements.txt and requirements-peers.lock from requirements-peers.txt (run it after changing either; commit them). */
import { lockPythonTools } from "./python-env.ts";

try {
  lockPythonTools((line) => console.error(`lock-python: ${line}`));
} catch (error) {
  console.error(`lock-python: ${(error as Error).message}`);
  process.exit(1);
}
