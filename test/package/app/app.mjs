// A whole app on the installed package, in plain JavaScript: a schema, one protected query and
// Better Auth with the backend plugin. README "Your own app from an empty folder" shows the same code.
import { betterAuth } from "better-auth";
import {
  authConfig,
  authHttpRouter,
  backend,
  createClient,
  defineAuthTables,
  ensureAuthEnv,
  getAuthUserId,
  siteUrlOf,
} from "service-auth/auth";
import { AppError, anyApi, defineSchema, defineTable, functionsFor, v } from "service-auth/server";

const schema = defineSchema({
  ...defineAuthTables(),
  notes: defineTable({ userId: v.id("user"), body: v.string() }).index("userId", ["userId"]),
});
const { query } = functionsFor(schema);

const authClient = createClient({ authFunctions: anyApi.auth, schema });
const createAuth = (ctx) =>
  betterAuth({
    baseURL: siteUrlOf(ctx.env),
    secret: ctx.env.get("SERVICE_AUTH_SECRET"),
    database: authClient.httpAdapter(ctx),
    emailAndPassword: { enabled: true },
    trustedOrigins: [siteUrlOf(ctx.env)],
    telemetry: { enabled: false },
    plugins: [backend({ authConfig: authConfig(ctx.env), jwks: ctx.env.get("JWKS") })],
  });

/** The signed-in user's id, or 401. */
const me = query({
  args: {},
  handler: async (ctx) => {
    const userId = await getAuthUserId(ctx);
    if (!userId) throw new AppError("UNAUTHORIZED", "Sign in first");
    return { userId };
  },
});

export const app = {
  schema,
  modules: { auth: authClient.createAuthFunctions(createAuth), users: { me } },
  auth: (env) => authConfig(env),
  routes: () => authHttpRouter({ createAuth }),
  onAuthSync: (backend) => ensureAuthEnv(backend, anyApi.auth.getLatestJwks),
};
