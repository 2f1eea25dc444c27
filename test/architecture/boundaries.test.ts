/**
 * The folder layout is the architecture (docs/architecture.md): these tests fail when an import
 * points the wrong way.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
/** The framework integrations: each builds on src/client and src/react only. */
const FRAMEWORKS = ["src/nextjs", "src/svelte", "src/sveltekit", "src/tanstack-start"].filter((dir) =>
  existsSync(join(root, dir)),
);
/** The framework examples, each a separate app on the package's public exports. */
const FRAMEWORK_EXAMPLES = ["examples/nextjs", "examples/sveltekit", "examples/tanstack-start"].filter(
  (dir) => existsSync(join(root, dir)),
);

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...files(path));
    else if (/\.(tsx?|svelte)$/.test(name)) out.push(path);
  }
  return out;
}

/** Every module specifier imported (statically or dynamically) by a file, with whether it is type-only. */
function imports(file: string): { spec: string; typeOnly: boolean }[] {
  // Comments out first: TSDoc examples show imports an app writes, which this file does not make.
  const text = readFileSync(file, "utf8")
    .replace(/^\s*\/\*[\s\S]*?\*\//gm, "")
    .replace(/^\s*\/\/.*$/gm, "");
  const out: { spec: string; typeOnly: boolean }[] = [];
  for (const m of text.matchAll(/^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+["']([^"']+)["']/gm)) {
    out.push({ spec: m[3], typeOnly: Boolean(m[2]) });
  }
  for (const m of text.matchAll(/^\s*import\s+["']([^"']+)["']/gm)) out.push({ spec: m[1], typeOnly: false });
  for (const m of text.matchAll(/import\(\s*["']([^"']+)["']\s*\)/g))
    out.push({ spec: m[1], typeOnly: false });
  return out;
}

function resolveRelative(file: string, spec: string): string {
  return relative(root, resolve(file, "..", spec));
}

describe("architecture boundaries", () => {
  it("src/auth uses only the platform's public entry points", () => {
    const offenders: string[] = [];
    for (const file of files(join(root, "src/auth"))) {
      for (const { spec } of imports(file)) {
        if (spec.startsWith(".")) {
          const target = resolveRelative(file, spec);
          if (!target.startsWith("src/auth/")) offenders.push(`${relative(root, file)} -> ${spec}`);
        } else if (
          spec.startsWith("service-auth/") &&
          !["service-auth/server", "service-auth/values"].includes(spec)
        ) {
          offenders.push(`${relative(root, file)} -> ${spec}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it("the package exports no internal entry: what only the project's own code uses is imported by path", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      exports: Record<string, unknown>;
    };
    expect(Object.keys(pkg.exports).filter((subpath) => /internal/.test(subpath))).toEqual([]);
    expect(existsSync(join(root, "src/backend/internal.ts"))).toBe(false);
  });

  it("the public server entry does not export the runtime class or the runtime's start", () => {
    // Its export statements (its header comment names what it leaves out).
    const server = readFileSync(join(root, "src/backend/server.ts"), "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
    expect(server).toMatch(/export type \{[^}]*\bBackend\b[^}]*\} from "\.\/api\/backend\.ts"/); // the interface
    expect(server).not.toMatch(/from\s+["']\.\/(runtime|service)\.ts["']/);
    expect(server).not.toMatch(
      /\b(BackendRuntime|startRuntimeService|Runtime\w*ServiceOptions|RuntimeRunningService)\b/,
    );
  });

  it("the platform never imports the auth integration, clients or the example", () => {
    const offenders: string[] = [];
    for (const file of files(join(root, "src/backend"))) {
      for (const { spec } of imports(file)) {
        const target = spec.startsWith(".") ? resolveRelative(file, spec) : spec;
        if (
          /^(src\/(app|auth|client|react|nextjs|svelte|sveltekit|tanstack-start)|examples)\//.test(target) ||
          /^service-auth\/(app|auth|client|react|nextjs|svelte|sveltekit|tanstack-start)/.test(target)
        ) {
          offenders.push(`${relative(root, file)} -> ${spec}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it("the product (src/app) builds on the platform's public entry and the auth integration; its bin on the platform CLI", () => {
    const offenders: string[] = [];
    for (const file of files(join(root, "src/app"))) {
      const cli = relative(root, file).startsWith("src/app/cli/");
      for (const { spec } of imports(file)) {
        if (!spec.startsWith(".")) continue;
        const target = resolveRelative(file, spec);
        // The auth integration's modules too: the product wires what the embedding entry leaves out.
        const allowed =
          target.startsWith("src/app/") ||
          target === "src/backend/server.ts" ||
          target.startsWith("src/auth/") ||
          (cli && target.startsWith("src/backend/cli/"));
        if (!allowed) offenders.push(`${relative(root, file)} -> ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it("the shared protocol module is a leaf: it imports nothing (server and browser bundles both use it)", () => {
    const offenders: string[] = [];
    for (const file of files(join(root, "src/protocol"))) {
      for (const { spec } of imports(file)) {
        const inside = spec.startsWith(".") && resolveRelative(file, spec).startsWith("src/protocol/");
        if (!inside) offenders.push(`${relative(root, file)} -> ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it("clients import only types from the platform (plus its dependency-free references) and the auth integration", () => {
    const offenders: string[] = [];
    for (const dir of ["src/client", "src/react", ...FRAMEWORKS]) {
      let list: string[] = [];
      try {
        list = files(join(root, dir));
      } catch {
        continue;
      }
      for (const file of list) {
        for (const { spec, typeOnly } of imports(file)) {
          const target = spec.startsWith(".") ? resolveRelative(file, spec) : spec;
          // references.ts is pure data (function paths): browser bundles may use it as is.
          const platform =
            (target.startsWith("src/backend/") && target !== "src/backend/functions/references.ts") ||
            target.startsWith("service-auth/server");
          const auth = target.startsWith("src/auth/") || target === "service-auth/auth";
          if ((platform || auth) && !typeOnly) {
            offenders.push(`${relative(root, file)} -> ${spec}`);
          }
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it.each(FRAMEWORKS)("the %s helpers build on the clients only: no platform or auth runtime", (dir) => {
    const offenders: string[] = [];
    for (const file of files(join(root, dir))) {
      for (const { spec, typeOnly } of imports(file)) {
        if (!spec.startsWith(".")) continue;
        const target = resolveRelative(file, spec);
        const allowed =
          /^src\/(client|react)\//.test(target) ||
          target.startsWith(`${dir}/`) ||
          (typeOnly && target.startsWith("src/backend/")) ||
          target === "src/backend/functions/references.ts";
        if (!allowed) offenders.push(`${relative(root, file)} -> ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it.each(FRAMEWORK_EXAMPLES)(
    "the %s example imports the package's public exports, and only types of its backend",
    (dir) => {
      const offenders: string[] = [];
      // Build output and generated files are not the example's sources.
      for (const file of files(join(root, dir)).filter(
        (f) => !/[/\\](\.next|\.svelte-kit|build|dist|\.output|\.tanstack)[/\\]|next-env\.d\.ts$/.test(f),
      )) {
        for (const { spec, typeOnly } of imports(file)) {
          if (!spec.startsWith(".")) continue;
          const target = resolveRelative(file, spec);
          if (!target.startsWith(`${dir}/`) && !(typeOnly && target.startsWith("examples/app/")))
            offenders.push(`${relative(root, file)} -> ${spec}`);
        }
      }
      expect(offenders).toEqual([]);
    },
  );

  it("the examples import only the entry points an app uses: server, app, client and the UI bindings", () => {
    const APP_ENTRIES = new Set([
      "service-auth/server",
      "service-auth/app",
      "service-auth/client",
      "service-auth/react",
      "service-auth/svelte",
      "service-auth/nextjs",
      "service-auth/nextjs/client",
      "service-auth/sveltekit",
      "service-auth/tanstack-start",
      "service-auth/tanstack-start/server",
    ]);
    const offenders: string[] = [];
    for (const dir of ["examples/app", ...FRAMEWORK_EXAMPLES]) {
      for (const file of files(join(root, dir)).filter(
        (f) => !/[/\\](\.next|\.svelte-kit|build|dist|\.output|\.tanstack)[/\\]|next-env\.d\.ts$/.test(f),
      )) {
        for (const { spec } of imports(file)) {
          if (/^service-auth(\/|$)/.test(spec) && !APP_ENTRIES.has(spec))
            offenders.push(`${relative(root, file)} -> ${spec}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it("the example app imports the package's public exports only", () => {
    const offenders: string[] = [];
    for (const file of files(join(root, "examples/app"))) {
      for (const { spec } of imports(file)) {
        if (spec.startsWith(".")) {
          if (!resolveRelative(file, spec).startsWith("examples/app/"))
            offenders.push(`${relative(root, file)} -> ${spec}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });
});
