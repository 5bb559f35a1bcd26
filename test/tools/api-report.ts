/**
 * The package's API as the TypeScript compiler sees lib/index.ts: every export with its kind,
 * functions with their signatures, classes with their constructor and public members. Checked
 * in as etc/lakewarden.api.md, compared by test/package/api-report.test.ts, so a change to what
 * users can import (a name, a kind, a signature) shows in the diff and is made on purpose.
 * Interfaces and types are listed by name: their fields are documented in the source.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const ENTRY = join(ROOT, "lib", "index.ts");
export const REPORT = join(ROOT, "etc", "lakewarden.api.md");

const PRINT = ts.TypeFormatFlags.NoTruncation;

function compilerOptions(): ts.CompilerOptions {
  const file = join(ROOT, "tsconfig.json");
  const config = ts.readConfigFile(file, (path) => readFileSync(path, "utf8"));
  if (config.error) throw new Error(`${file}: ${ts.flattenDiagnosticMessageText(config.error.messageText, "\n")}`);
  return ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT).options;
}

function kindOf(symbol: ts.Symbol): string {
  const flags = symbol.flags;
  if (flags & ts.SymbolFlags.Class) return "class";
  if (flags & ts.SymbolFlags.Function) return "function";
  if (flags & ts.SymbolFlags.Enum) return "enum";
  if (flags & ts.SymbolFlags.Variable) return "const";
  if (flags & ts.SymbolFlags.Interface) return "interface";
  if (flags & ts.SymbolFlags.TypeAlias) return "type";
  throw new Error(`export ${symbol.name} is of a kind the report does not know (flags ${flags})`);
}

function isPublicMember(declaration: ts.Declaration): boolean {
  if (ts.isPrivateIdentifier((declaration as ts.NamedDeclaration).name ?? declaration)) return false;
  const modifiers = ts.getCombinedModifierFlags(declaration);
  return (modifiers & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) === 0;
}

function classLines(checker: ts.TypeChecker, name: string, symbol: ts.Symbol): string[] {
  const declaration = symbol.declarations!.find(ts.isClassDeclaration)!;
  const heritage = declaration.heritageClauses?.map((clause) => ` ${clause.getText()}`).join("") ?? "";
  const lines = [`class ${name}${heritage}`];
  const constructorType = checker.getTypeOfSymbolAtLocation(symbol, declaration);
  for (const signature of constructorType.getConstructSignatures()) {
    if (signature.declaration && !isPublicMember(signature.declaration)) continue;
    const parameters = signature.parameters.map(
      (p) => `${p.name}${optional(p) ? "?" : ""}: ${checker.typeToString(checker.getTypeOfSymbolAtLocation(p, declaration), undefined, PRINT)}`,
    );
    lines.push(`  constructor(${parameters.join(", ")})`);
  }
  const members: { name: string; line: string }[] = [];
  for (const member of [...(symbol.members?.values() ?? []), ...(symbol.exports?.values() ?? [])]) {
    const memberDeclaration = member.declarations?.[0];
    if (!memberDeclaration || member.name === "__constructor" || member.name === "prototype" || !isPublicMember(memberDeclaration)) continue;
    const isStatic = (ts.getCombinedModifierFlags(memberDeclaration) & ts.ModifierFlags.Static) !== 0 ? "static " : "";
    const type = checker.getTypeOfSymbolAtLocation(member, memberDeclaration);
    if (member.flags & ts.SymbolFlags.Method) {
      for (const signature of type.getCallSignatures())
        members.push({ name: member.name, line: `  ${isStatic}${member.name}${checker.signatureToString(signature, undefined, PRINT)}` });
    } else {
      const getterOnly = (member.flags & ts.SymbolFlags.GetAccessor) !== 0 && (member.flags & ts.SymbolFlags.SetAccessor) === 0;
      const readonly = getterOnly || (ts.getCombinedModifierFlags(memberDeclaration) & ts.ModifierFlags.Readonly) !== 0 ? "readonly " : "";
      members.push({ name: member.name, line: `  ${isStatic}${readonly}${member.name}: ${checker.typeToString(type, undefined, PRINT)}` });
    }
  }
  return [...lines, ...members.sort((a, b) => a.name.localeCompare(b.name)).map((member) => member.line)];
}

function optional(parameter: ts.Symbol): boolean {
  const declaration = parameter.valueDeclaration;
  return declaration !== undefined && ts.isParameter(declaration) && (declaration.questionToken !== undefined || declaration.initializer !== undefined);
}

/** The report's text: one block per export, sorted by name. */
export function apiReport(): string {
  const program = ts.createProgram([ENTRY], compilerOptions());
  const checker = program.getTypeChecker();
  const entry = program.getSourceFile(ENTRY);
  const module = entry && checker.getSymbolAtLocation(entry);
  if (!module) throw new Error(`${ENTRY}: the compiler does not read it as a module`);
  const blocks = checker.getExportsOfModule(module).map((exported) => {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const name = exported.name;
    const kind = kindOf(symbol);
    const declaration = symbol.declarations![0]!;
    if (kind === "class") return classLines(checker, name, symbol);
    if (kind === "function") {
      return checker
        .getTypeOfSymbolAtLocation(symbol, declaration)
        .getCallSignatures()
        .map((signature) => `function ${name}${checker.signatureToString(signature, undefined, PRINT)}`);
    }
    if (kind === "const") return [`const ${name}: ${checker.typeToString(checker.getTypeOfSymbolAtLocation(symbol, declaration), undefined, PRINT)}`];
    return [`${kind} ${name}`];
  });
  blocks.sort((a, b) => nameOf(a[0]!).localeCompare(nameOf(b[0]!)));
  return [
    "# lakewarden's API",
    "",
    'What `import … from "lakewarden"` gives (lib/index.ts), as the TypeScript compiler reads it. Generated by',
    "`npm run api:update`; test/package/api-report.test.ts fails when it differs from the code, so a change to the",
    "API is a change to this file too. Interfaces and types are listed by name; their fields are documented in the source.",
    "",
    "```ts",
    ...blocks.flat(),
    "```",
    "",
  ].join("\n");
}

function nameOf(line: string): string {
  return /^\S+ ([A-Za-z0-9_$]+)/.exec(line)![1]!;
}
