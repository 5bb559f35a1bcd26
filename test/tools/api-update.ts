/** `npm run api:update`: writes etc/lakewarden.api.md from lib/index.ts (test/tools/api-report.ts). */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, relative } from "node:path";
import { REPORT, ROOT, apiReport } from "./api-report.ts";

mkdirSync(dirname(REPORT), { recursive: true });
writeFileSync(REPORT, apiReport());
console.log(`api: wrote ${relative(ROOT, REPORT)}; commit it with the change to lib/index.ts`);
