/**
 * The package's entry points are a contract: this snapshot lists every name each one exports,
 * with its kind, so adding, removing or changing the kind of an export is a visible diff in
 * `__snapshots__/public-exports.test.ts.snap` (review it; `npx vitest run -u` to accept).
 * Read with the TypeScript checker from the source entry points package.json names.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";

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

/** The entry points an app imports (plus the embedding one): a name in two of them is one thing. */
const APP_SURFACE = ["service-auth/server", "service-auth/app", "service-auth/auth", "service-auth/client"];

interface EntryExports {
  /** Every entry point's exports as `name: kind` lines, sorted by name. */
  lines: Record<string, string[]>;
  /** Every entry point's exports by name, with the declaration each resolves to. */
  declarations: Record<string, Map<string, ts.Symbol>>;
}

function publicExports(): EntryExports {
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
  const lines: Record<string, string[]> = {};
  const declarations: Record<string, Map<string, ts.Symbol>> = {};
  for (const { specifier, file } of entries) {
    const source = program.getSourceFile(file);
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`${specifier}: ${file} is not a module`);
    declarations[specifier] = new Map();
    lines[specifier] = checker
      .getExportsOfModule(module)
      .map((s) => {
        const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
        declarations[specifier].set(s.name, target);
        return `${s.name}: ${kindOf(target)}${docsOf(target, checker)}`;
      })
      .sort((a, b) => a.localeCompare(b, "en"));
  }
  return { lines, declarations };
}

describe("public exports", () => {
  let exports: EntryExports;
  beforeAll(() => {
    exports = publicExports();
  }, 120_000);

  it("every entry point exports exactly the names in the snapshot", () => {
    expect(Object.keys(exports.lines).length).toBe(entries.length);
    // The runtime class is no entry's: the server entry exports the interface it satisfies.
    expect(exports.lines["service-auth/server"]).toContain("Backend: interface");
    expect(Object.values(exports.lines).flat()).not.toContain("BackendRuntime: class");
    expect(exports.lines).toMatchSnapshot();
  });

  it("a name exported by two of server, app, auth and client is the same declaration in both", () => {
    const first = new Map<string, { specifier: string; symbol: ts.Symbol }>();
    const differing: string[] = [];
    for (const specifier of APP_SURFACE) {
      for (const [name, symbol] of exports.declarations[specifier]) {
        const seen = first.get(name);
        if (!seen) first.set(name, { specifier, symbol });
        else if (seen.symbol !== symbol) differing.push(`${name}: ${seen.specifier} and ${specifier}`);
      }
    }
    expect(differing).toEqual([]);
    // The app entry re-exports the auth helpers app code calls: the same functions, not copies.
    for (const name of ["getAuthUserId", "recordAuditEvent", "createAdminFunctions", "freshSessionFor"]) {
      expect(exports.declarations["service-auth/app"].get(name)).toBe(
        exports.declarations["service-auth/auth"].get(name),
      );
    }
  });

  it("the types an app names exist once: Backend, ServiceOptions, RunningService", () => {
    for (const name of ["Backend", "ServiceOptions", "RunningService"]) {
      const where = Object.entries(exports.declarations)
        .filter(([, names]) => names.has(name))
        .map(([specifier]) => specifier);
      expect(where, name).toEqual(["service-auth/server"]);
    }
  });
});
