/**
 * The files `service-auth init` writes: an app with the auth tables, one query and one mutation
 * of its own, email + password sign-in, a page on `service-auth/client`, and a test.
 */

/** `package.json` of a new app named `name` depending on `service-auth` at `spec`. */
export function packageJson(name: string, spec: string): string {
  const pkg = {
    name,
    private: true,
    type: "module",
    scripts: {
      start: "service-auth start",
      dev: "service-auth dev",
      cli: "service-auth",
      test: "node --test",
    },
    dependencies: { "service-auth": spec },
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

const APP = `// The app: its tables, functions and page; \`npm start\` serves it with every product default.
import { readFileSync } from "node:fs";
import { Hono } from "hono";
import { authTables, browserScript, defineApp, getAuthUserId } from "service-auth/app";
import { AppError, defineSchema, defineTable, functionsFor, v } from "service-auth/server";

const schema = defineSchema({
  ...authTables(), // user, session, account, verification, jwks…: Better Auth's tables, here
  notes: defineTable({ userId: v.id("user"), body: v.string() }).index("userId", ["userId"]),
});
const { query, mutation } = functionsFor(schema);

async function signedIn(ctx) {
  const userId = await getAuthUserId(ctx); // null without a valid token of a live session
  if (!userId) throw new AppError("UNAUTHORIZED", "Sign in first");
  return userId;
}

// notes:list, the caller's notes (a live query on the page), and notes:add.
const list = query({
  args: {},
  handler: async (ctx) => {
    const userId = await signedIn(ctx);
    return ctx.db.query("notes").withIndex("userId", (q) => q.eq("userId", userId)).collect();
  },
});
const add = mutation({
  args: { body: v.string() },
  handler: async (ctx, { body }) => {
    const userId = await signedIn(ctx);
    if (!body.trim() || body.length > 1000) throw new AppError("BAD_REQUEST", "A note has 1 to 1000 characters");
    return ctx.db.insert("notes", { userId, body: body.trim() });
  },
});

const page = readFileSync(new URL("./page.html", import.meta.url), "utf8");
const script = browserScript(new URL("./page.mjs", import.meta.url));
const routes = new Hono().get("/", (c) => c.html(page)).get("/page.js", script);

export default defineApp({ schema, modules: { notes: { list, add } }, auth: { schema }, routes });
`;

const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Notes</title>
  <script type="module" src="/page.js"></script>
</head>
<body>
  <main>
    <h1>Notes</h1>
    <form id="sign-in" hidden>
      <input name="email" type="email" placeholder="email" autocomplete="username" required>
      <input name="password" type="password" placeholder="password (8+ characters)" autocomplete="current-password" required>
      <button name="up">Sign up</button> <button name="in">Sign in</button>
    </form>
    <section id="notes" hidden>
      <form id="add"><input name="body" placeholder="a note" required> <button>Add</button></form>
      <ul id="list"></ul>
      <button id="sign-out">Sign out</button>
    </section>
    <p id="error" role="alert"></p>
  </main>
</body>
</html>
`;

const PAGE_SCRIPT = `// The page: Better Auth signs in (cookies), the backend client runs notes:list live over the
// WebSocket with a JWT from the session, and notes:add.
import { createAuthClient } from "better-auth/client";
import { BackendClient, backendClient } from "service-auth/client";

const auth = createAuthClient({ baseURL: location.origin, plugins: [backendClient()] });
const backend = new BackendClient(\`\${location.origin.replace(/^http/, "ws")}/api/sync\`);
const $ = (id) => document.getElementById(id);
const say = (message) => ($("error").textContent = message ?? "");
let stop;

function show(signedIn) {
  $("sign-in").hidden = signedIn;
  $("notes").hidden = !signedIn;
  stop?.();
  stop = signedIn
    ? backend.subscribe("notes:list", {}, (notes) => {
        $("list").replaceChildren(
          ...notes.map((n) => Object.assign(document.createElement("li"), { textContent: n.body })),
        );
      })
    : undefined;
}

const connect = () => backend.setAuth(() => auth.backend.getToken(), show);

$("sign-in").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const email = String(form.get("email"));
  const password = String(form.get("password"));
  const { error } =
    event.submitter?.name === "up"
      ? await auth.signUp.email({ email, password, name: email.split("@")[0] })
      : await auth.signIn.email({ email, password });
  say(error?.message);
  if (!error) connect();
});
$("add").addEventListener("submit", async (event) => {
  event.preventDefault();
  const input = event.target.elements.body;
  try {
    await backend.mutation("notes:add", { body: input.value });
    input.value = "";
    say();
  } catch (error) {
    say(error.message);
  }
});
$("sign-out").addEventListener("click", async () => {
  await auth.signOut();
  backend.clearAuth();
  show(false);
});

const { data } = await auth.getSession();
if (data) connect();
else show(false);
`;

const TEST = `// \`npm test\`: the app on a free port and its own database, driven over HTTP.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { startApp } from "service-auth/app";
import app from "./app.mjs";

const port = await new Promise((done) => {
  const server = createServer().listen(0, () => {
    const { port } = server.address();
    server.close(() => done(port));
  });
});
const url = \`http://127.0.0.1:\${port}\`;
Object.assign(process.env, { PORT: String(port), SITE_URL: url, LOG_LEVEL: "warn", SHUTDOWN_DELAY_MS: "0" });
process.env.DATABASE_URL = join(mkdtempSync(join(tmpdir(), "app-test-")), "test.sqlite");
const service = await startApp(app, { exitOnSignals: false });
after(() => service.close());

const call = async (kind, path, args, token) => {
  const res = await fetch(\`\${url}/api/\${kind}\`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: \`Bearer \${token}\` } : {}) },
    body: JSON.stringify({ path, args }),
  });
  return { status: res.status, body: await res.json() };
};

test("a signed-up user adds a note and lists it; without a token the list is refused", async () => {
  const signUp = await fetch(\`\${url}/api/auth/sign-up/email\`, {
    method: "POST",
    headers: { origin: url, "content-type": "application/json" },
    body: JSON.stringify({ email: "ann@example.com", password: "correct horse battery", name: "Ann" }),
  });
  assert.equal(signUp.status, 200);
  const cookie = signUp.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const { token } = await (await fetch(\`\${url}/api/auth/backend/token\`, { headers: { cookie } })).json();
  assert.equal((await call("mutation", "notes:add", { body: "hello" }, token)).status, 200);
  const listed = await call("query", "notes:list", {}, token);
  assert.deepEqual(listed.body.value.map((n) => n.body), ["hello"]);
  const anonymous = await call("query", "notes:list", {});
  assert.equal(anonymous.body.code, "UNAUTHORIZED");
});
`;

const GITIGNORE = "node_modules\n.data\n";

/** Every file of a new app, by name. */
export function scaffoldFiles(name: string, spec: string): Record<string, string> {
  return {
    "package.json": packageJson(name, spec),
    "app.mjs": APP,
    "page.html": PAGE_HTML,
    "page.mjs": PAGE_SCRIPT,
    "app.test.mjs": TEST,
    ".gitignore": GITIGNORE,
  };
}
