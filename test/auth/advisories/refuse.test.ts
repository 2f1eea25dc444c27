/**
 * Refusal at start (docs/security.md): oidc-provider, mcp, device-authorization and cookie OAuth
 * state make the auth fail to initialise on Better Auth 1.4.9 with one line naming the advisories
 * and the way out, unless every advisory is accepted; the defaults keep OAuth state in the
 * database. On the newest patched line (`npm run better-auth-next`) the same features start.
 */
import { type BetterAuthOptions, type BetterAuthPlugin, betterAuth } from "better-auth";
import { memoryAdapter } from "better-auth/adapters/memory";
import { deviceAuthorization } from "better-auth/plugins";
import {
  type AuthFunctions,
  authConfig,
  backend,
  bindAuthData,
  checkAuthStarts,
  defineAuthTables,
  AdvisoryRefusal as ExportedRefusal,
} from "service-auth/auth";
import { type ActionCtx, anyApi, defineSchema } from "service-auth/server";
import { describe, expect, it } from "vitest";
import { ADVISORY, acceptedAdvisories, REFUSED_PLUGINS } from "../../../src/auth/advisories/catalog.ts";
import { AdvisoryRefusal, predates, refuseUnpatchedFeatures } from "../../../src/auth/advisories/refuse.ts";
import { BETTER_AUTH_VERSION, ON_PINNED_LINE } from "../../helpers/better-auth-line.ts";
import { startTestService } from "../../helpers/service.ts";

const env = { get: (name: string) => ({ SITE_URL: "http://localhost:3999" })[name] };

function authWith(extra: Partial<BetterAuthOptions>, acceptAdvisories?: string) {
  const { plugins = [], ...rest } = extra;
  return betterAuth({
    baseURL: "http://localhost:3999",
    secret: "refuse-test-secret-refuse-test-secret-0123",
    database: memoryAdapter({}),
    telemetry: { enabled: false },
    logger: { disabled: true },
    ...rest,
    plugins: [backend({ authConfig: authConfig(env), acceptAdvisories }), ...plugins],
  });
}

/** The refusal an auth's initialisation rejects with (its context promise). */
async function refusalOf(auth: { $context: Promise<unknown> }): Promise<AdvisoryRefusal> {
  const error = await auth.$context.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AdvisoryRefusal);
  return error as AdvisoryRefusal;
}

const OIDC = REFUSED_PLUGINS.find((p) => p.pluginId === "oidc")!.advisories;

/**
 * The refusal reads plugin ids only. oidc-provider and mcp left `better-auth/plugins` after 1.4
 * (1.7 has them in other packages), so they stand in by their ids on both lines.
 */
const oidcProvider = (): BetterAuthPlugin => ({ id: "oidc" });
const mcp = (): BetterAuthPlugin => ({ id: "mcp" });
const cases = [
  ["oidc", oidcProvider],
  ["mcp", mcp],
  ["device-authorization", () => deviceAuthorization({ schema: {} })],
] as const;

describe.skipIf(!ON_PINNED_LINE)(
  "refused plugins (Better Auth 1.4.9 only: fixed on the patched line)",
  () => {
    for (const [id, plugin] of cases) {
      it(`${id}: one line naming every advisory, the patched line and the accepting setting`, async () => {
        const refusal = await refusalOf(authWith({ plugins: [plugin()] }));
        expect(refusal.message).toContain(`on better-auth ${BETTER_AUTH_VERSION}:`);
        const expected = REFUSED_PLUGINS.find((p) => p.pluginId === id)!;
        expect(refusal.message).not.toContain("\n");
        expect(refusal.message).toContain(`"${id}"`);
        for (const advisory of expected.advisories) expect(refusal.message).toContain(advisory);
        expect(refusal.message).toContain(`better-auth >= ${expected.fixedIn}`);
        expect(refusal.message).toContain(`SERVICE_AUTH_ACCEPT_ADVISORIES=${expected.advisories.join(",")}`);
        expect(refusal.advisories).toEqual(expected.advisories);
      });
    }

    it("a request to a refused auth fails instead of being served", async () => {
      const auth = authWith({ plugins: [oidcProvider()] });
      await expect(auth.handler(new Request("http://localhost:3999/api/auth/ok"))).rejects.toThrow(
        AdvisoryRefusal,
      );
    });

    it("accepting only some of the advisories still refuses, naming the rest", async () => {
      const refusal = await refusalOf(authWith({ plugins: [oidcProvider()] }, OIDC.slice(0, 2).join(",")));
      expect(refusal.advisories).toEqual(OIDC.slice(2));
    });

    it("accepting every advisory (any case, spaces allowed) lets the auth start", async () => {
      const accept = OIDC.map((id) => ` ${id.toLowerCase()} `).join(",");
      const auth = authWith({ plugins: [oidcProvider()] }, accept);
      const ctx = await auth.$context;
      expect(ctx.options.plugins?.some((p) => p.id === "oidc")).toBe(true);
    });

    it("an auth without them starts", async () => {
      await expect(authWith({}).$context).resolves.toBeDefined();
    });
  },
);

describe.skipIf(ON_PINNED_LINE)(
  `the patched line (better-auth ${BETTER_AUTH_VERSION}) refuses nothing`,
  () => {
    it("every refused plugin, and cookie OAuth state, start without accepting an advisory", async () => {
      for (const [, plugin] of cases)
        await expect(authWith({ plugins: [plugin()] }).$context).resolves.toBeDefined();
      const ctx = await authWith({ account: { storeStateStrategy: "cookie" } }).$context;
      expect(ctx.oauthConfig.storeStateStrategy).toBe("cookie");
    });
  },
);

describe("which releases are refused", () => {
  const none = acceptedAdvisories(undefined);
  const refused = (version: string, options: Parameters<typeof refuseUnpatchedFeatures>[0]) => {
    try {
      refuseUnpatchedFeatures(options, none, version);
      return undefined;
    } catch (error) {
      return (error as AdvisoryRefusal).advisories;
    }
  };

  it("every release before a fix is refused, the fixing release and later ones are not", () => {
    for (const plugin of REFUSED_PLUGINS) {
      const options = { plugins: [{ id: plugin.pluginId }] };
      const [major, minor, patch] = plugin.fixedIn.split(".").map(Number);
      expect(refused("1.4.9", options)).toEqual(plugin.advisories);
      expect(refused(`${major}.${minor}.${patch - 1}`, options)).toEqual(plugin.advisories);
      expect(refused(plugin.fixedIn, options)).toBeUndefined();
      expect(refused(`${major}.${minor + 1}.0`, options)).toBeUndefined();
      expect(refused("1.7.25", options)).toBeUndefined();
    }
    const cookie = { account: { storeStateStrategy: "cookie" } };
    expect(refused("1.6.1", cookie)).toEqual([ADVISORY.cookieOAuthState]);
    expect(refused("1.6.2", cookie)).toBeUndefined();
  });

  it("names the open advisories in one sentence, singular or plural, as an AdvisoryRefusal", () => {
    const plugin = REFUSED_PLUGINS.find((p) => p.advisories.length > 1);
    if (!plugin) throw new Error("the catalog has a plugin with several advisories");
    const options = { plugins: [{ id: plugin.pluginId }] };
    const message = (accepted: readonly string[]) => {
      try {
        refuseUnpatchedFeatures(options, acceptedAdvisories(accepted), "1.4.9");
      } catch (error) {
        expect(error).toBeInstanceOf(AdvisoryRefusal);
        expect((error as Error).name).toBe("AdvisoryRefusal");
        return (error as Error).message;
      }
      throw new Error("not refused");
    };
    const all = plugin.advisories;
    expect(message([])).toContain(`: ${all.join(", ")} are unfixed there`);
    const last = all[all.length - 1] as string;
    expect(message(all.slice(0, -1))).toContain(`: ${last} is unfixed there`);
  });

  it("compares major.minor.patch only", () => {
    expect(predates("1.4.9", "1.4.9.1")).toBe(false);
    expect(predates("1.4.9.1", "1.4.10")).toBe(true);
  });

  it("compares releases by number, not as text, and ignores a pre-release tag", () => {
    expect(predates("1.6.9", "1.6.13")).toBe(true);
    expect(predates("1.10.0", "1.6.13")).toBe(false);
    expect(predates("1.6.13-beta.1", "1.6.13")).toBe(false);
    expect(predates("2.0.0", "1.6.13")).toBe(false);
  });
});

describe(`OAuth state storage (${ADVISORY.cookieOAuthState})`, () => {
  it("state stays in the database by default", async () => {
    const ctx = await authWith({}).$context;
    expect(ctx.oauthConfig.storeStateStrategy).toBe("database");
  });

  it.skipIf(!ON_PINNED_LINE)(
    'storeStateStrategy "cookie" is refused (1.4.9 only), and starts only when accepted',
    async () => {
      const refusal = await refusalOf(authWith({ account: { storeStateStrategy: "cookie" } }));
      expect(refusal.message).toContain(ADVISORY.cookieOAuthState);
      expect(refusal.message).not.toContain("\n");
      const accepted = authWith({ account: { storeStateStrategy: "cookie" } }, ADVISORY.cookieOAuthState);
      expect((await accepted.$context).oauthConfig.storeStateStrategy).toBe("cookie");
    },
  );
});

describe(`implicit OAuth account linking (${ADVISORY.implicitOAuthLinking})`, () => {
  it("is off unless the app turns it on", async () => {
    expect((await authWith({}).$context).options.account?.accountLinking?.enabled).toBe(false);
    const optedIn = authWith({
      account: { accountLinking: { enabled: true, trustedProviders: ["github"] } },
    });
    expect((await optedIn.$context).options.account?.accountLinking?.enabled).toBe(true);
    const accepted = authWith({}, ADVISORY.implicitOAuthLinking);
    expect((await accepted.$context).options.account?.accountLinking?.enabled).toBeUndefined();
  });
});

describe.skipIf(!ON_PINNED_LINE)("refusal at the start of a service (Better Auth 1.4.9 only)", () => {
  /** A service whose auth has the oidc-provider plugin and checks its auth in `prepare`. */
  function refusedApp(acceptAdvisories?: string) {
    const schema = defineSchema({ ...defineAuthTables() });
    const authData = bindAuthData({ authFunctions: anyApi.auth as AuthFunctions, schema });
    const createAuth = (ctx: ActionCtx) =>
      betterAuth({
        baseURL: "http://localhost:3999",
        secret: "refuse-test-secret-refuse-test-secret-0123",
        database: authData.httpAdapter(ctx),
        telemetry: { enabled: false },
        logger: { disabled: true },
        plugins: [backend({ authConfig: authConfig(ctx.env), acceptAdvisories }), oidcProvider()],
      });
    return {
      schema,
      modules: { auth: authData.createAuthFunctions(createAuth) },
      prepare: (b: Parameters<typeof checkAuthStarts>[0]) => checkAuthStarts(b, anyApi.auth.checkOptions),
    };
  }

  it("rejects with the one-line refusal before the server listens", async () => {
    const error = await startTestService(refusedApp()).then(
      async (service) => {
        await service.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ExportedRefusal);
    expect((error as AdvisoryRefusal).advisories).toEqual(OIDC);
    expect((error as Error).message).not.toContain("\n");
  });

  it("starts when every advisory is accepted", async () => {
    const service = await startTestService(refusedApp(OIDC.join(",")));
    try {
      expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
    } finally {
      await service.close();
    }
  });
});
