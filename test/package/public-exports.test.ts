/**
 * The package's entry points are a contract: this snapshot lists every name each one exports,
 * with its kind, so adding, removing or changing the kind of an export is a visible diff in
 * `__snapshots__/public-exports.test.ts.snap` (review it; `npx vitest run -u` to accept).
 * Read with the TypeScript checker from the source entry points package.json names.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const pkg = JSON.parse(readFileSync(resolve(root, "package.json"), "utf8")) as {
  exports: Record<string, { "service-auth-source": string }>;
};
const entries = Object.entries(pkg.exports).map(([subpath, target]) => ({
  specifier: `service-auth${subpath.slice(1)}`,
  file: resolve(root, target["service-auth-source"]),
}));

/** `class`, `function`, `const`, `interface`, `type` (or a combination, e.g. `const+type`). */
function kindOf(symbol: ts.Symbol): string {
  const f = symbol.flags;
  if (f & ts.SymbolFlags.Class) return "class";
  const kinds: string[] = [];
  if (f & ts.SymbolFlags.Function) kinds.push("function");
  if (f & ts.SymbolFlags.Variable) kinds.push("const");
  if (f & ts.SymbolFlags.Enum) kinds.push("enum");
  if (f & ts.SymbolFlags.Interface) kinds.push("interface");
  if (f & ts.SymbolFlags.TypeAlias) kinds.push("type");
  if (f & ts.SymbolFlags.Module) kinds.push("namespace");
  return kinds.join("+") || "other";
}

/**
 * How far an export's TSDoc goes: every public export is to have a summary and an `@example`;
 * the snapshot marks those still without, so the gap is visible and a new one shows in review.
 */
function docsOf(symbol: ts.Symbol, checker: ts.TypeChecker): string {
  const summary = symbol.getDocumentationComment(checker).length > 0;
  const example = symbol.getJsDocTags(checker).some((t) => t.name === "example");
  return example ? "" : summary ? " (no example)" : " (undocumented)";
}

/** Every entry point's exports as `name: kind` lines, sorted by name. */
function publicExports(): Record<string, string[]> {
  const config = ts.getParsedCommandLineOfConfigFile(
    resolve(root, "tsconfig.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      },
    },
  );
  if (!config) throw new Error("tsconfig.json did not parse");
  const program = ts.createProgram(
    entries.map((e) => e.file),
    config.options,
  );
  const checker = program.getTypeChecker();
  const out: Record<string, string[]> = {};
  for (const { specifier, file } of entries) {
    const source = program.getSourceFile(file);
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`${specifier}: ${file} is not a module`);
    out[specifier] = checker
      .getExportsOfModule(module)
      .map((s) => {
        const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
        // The internal entry promises nothing, so its names need no examples.
        const docs = specifier === "service-auth/internal" ? "" : docsOf(target, checker);
        return `${s.name}: ${kindOf(target)}${docs}`;
      })
      .sort((a, b) => a.localeCompare(b, "en"));
  }
  return out;
}

describe("public exports", () => {
  it("every entry point exports exactly the names in the snapshot", { timeout: 120_000 }, () => {
    const exports = publicExports();
    expect(Object.keys(exports).length).toBe(entries.length);
    // The runtime class is internal: the public entry exports the interface it satisfies.
    expect(exports["service-auth/server"]).toContain("Backend: interface");
    expect(exports["service-auth/internal"]).toContain("BackendRuntime: class");
    // Its old name, kept as a deprecated alias.
    expect(exports["service-auth/internal"]).toContain("Backend: class");
    expect(exports).toMatchSnapshot();
  });
});
