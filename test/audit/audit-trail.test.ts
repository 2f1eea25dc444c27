/**
 * The audit trail end to end on the example app's real HTTP server: every event type is produced
 * through the real routes (and the real CLI process for environment changes), found in the
 * `auditEvent` table with its actor, target, address and details, and no stored event contains
 * a password, session token, JWT, reset token or the auth secret. The CLI's `audit` command
 * prints the events as JSON lines, filtered; the retention sweep deletes only old events.
 */
import Database from "@service-auth/better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { app as exampleOptions, internal } from "../../examples/app/app.ts";
import { AUDIT_RETENTION_CRON } from "../../src/auth/audit/retention.ts";
import { AUDIT_EVENT_TYPES, type AuditEventView } from "../../src/auth/index.ts";
import type { Commit } from "../../src/backend/db/read-write-sets.ts";
import { ON_PINNED_LINE } from "../helpers/better-auth-line.ts";
import { type Browser, type ExampleApp, PASSWORD, startExampleApp } from "../helpers/example-app.ts";
import { PROCESS_TEST_TIMEOUT, runCli } from "../helpers/process.ts";
import { startSmtpServer, type TestSmtpServer } from "../helpers/smtp.ts";
import { totp } from "../helpers/totp.ts";
import { eventually } from "../helpers/wait.ts";

let app: ExampleApp;
let smtp: TestSmtpServer;
/** Every credential the flows below handle: none may appear in a stored event. */
const secrets = new Set<string>();

beforeAll(async () => {
  smtp = await startSmtpServer({ user: "mailer", pass: "mail secret" });
  app = await startExampleApp();
  await app.backend.env.set("SMTP_URL", smtp.url);
  await app.backend.env.set("MAIL_FROM", "Example <no-reply@example.com>");
});
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

/** Remembers the session and JWT cookies a browser holds now. */
function collect(browser: Browser): void {
  for (const name of ["service-auth.session_token", "service-auth.jwt"]) {
    const value = browser.jar.get(name);
    if (!value) continue;
    secrets.add(value);
    // A signed session cookie is `token.signature`: the bare token counts too.
    secrets.add(decodeURIComponent(value).split(".")[0]);
  }
}

async function events(filter: Record<string, unknown> = {}): Promise<AuditEventView[]> {
  const { value } = await app.backend.runQuery(
    internal.audit.list,
    { limit: 1000, ...filter },
    { allowInternal: true },
  );
  return value as AuditEventView[];
}

/** Every row of the audit table exactly as the SQLite file stores it. */
function stored(): string {
  const db = new Database(app.service.databaseFile, { readonly: true });
  try {
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 't_auditEvent%'")
      .all() as { name: string }[];
    expect(tables).toHaveLength(1);
    return JSON.stringify(db.prepare(`SELECT * FROM "${tables[0].name}"`).all());
  } finally {
    db.close();
  }
}

const cli = (args: string[]) =>
  runCli(args, { env: { DATABASE_URL: app.service.databaseFile, SITE_URL: app.url } });

async function post(browser: Browser, path: string, body: unknown = {}) {
  const res = await browser.post(path, body);
  expect(res.status, `${path}: ${res.text}`).toBe(200);
  collect(browser);
  return res;
}

async function signIn(email: string, password = PASSWORD): Promise<Browser> {
  const b = app.browser();
  await post(b, "/api/auth/sign-in/email", { email, password });
  return b;
}

describe("audit trail", () => {
  it("records every event type through the real routes, with no secret in any stored event", {
    timeout: PROCESS_TEST_TIMEOUT,
  }, async () => {
    const started = Date.now();
    secrets.add(PASSWORD);
    secrets.add(String(app.backend.env.get("SERVICE_AUTH_SECRET")));

    // Sign-up (and its session), an administrator, a failed and a successful sign-in, sign-out.
    const commits: Commit[] = [];
    const stopListening = app.backend.onCommit((commit) => commits.push(commit));
    const alice = await app.signUp("alice@example.com");
    stopListening();
    collect(alice.browser);
    const signUpEvent = (c: Commit) =>
      c.writes.some((w) => w.table === "auditEvent" && w.after?.type === "sign-up");
    if (ON_PINNED_LINE) {
      // The sign-up event commits with the user it records: one transaction, one commit.
      const together = commits.find(
        (c) =>
          c.writes.some((w) => w.table === "user" && w.after?.email === "alice@example.com") &&
          signUpEvent(c),
      );
      expect(together, "user and sign-up event in one commit").toBeDefined();
    } else {
      // Better Auth 1.7 runs database hooks' `after` once the sign-up's transaction has committed:
      // the event follows the user in a commit of its own.
      expect(commits.some(signUpEvent), "a sign-up event committed").toBe(true);
    }
    const admin = await app.signUp("root@example.com");
    await app.makeAdmin("root@example.com");
    const adminBrowser = await signIn("root@example.com");
    const wrong = "not the password at all";
    secrets.add(wrong);
    const failed = await app
      .browser()
      .post("/api/auth/sign-in/email", { email: "alice@example.com", password: wrong });
    expect(failed.status).toBe(401);
    const aliceAgain = await signIn("alice@example.com");
    await post(aliceAgain, "/api/auth/sign-out");

    // Administration: role, ban (with reason and expiry), unban, revoke a session, impersonate.
    await post(adminBrowser, "/api/auth/admin/set-role", { userId: alice.userId, role: "admin" });
    await post(adminBrowser, "/api/auth/admin/set-role", { userId: alice.userId, role: "user" });
    await post(adminBrowser, "/api/auth/admin/ban-user", {
      userId: alice.userId,
      banReason: "spam",
      banExpiresIn: 3600,
    });
    const banned = await app
      .browser()
      .post("/api/auth/sign-in/email", { email: "alice@example.com", password: PASSWORD });
    expect(banned.status).toBe(403);
    await post(adminBrowser, "/api/auth/admin/unban-user", { userId: alice.userId });
    const aliceTab = await signIn("alice@example.com");
    await signIn("alice@example.com"); // a second device, revoked below
    const listed = await post(adminBrowser, "/api/auth/admin/list-user-sessions", { userId: alice.userId });
    for (const s of listed.body.sessions) secrets.add(s.token);
    // Revoke her older session, not the tab that changes the password below.
    const tabToken = decodeURIComponent(aliceTab.jar.get("service-auth.session_token")!).split(".")[0];
    const otherSession = listed.body.sessions.find((s: { token: string }) => s.token !== tabToken).token;
    await post(adminBrowser, "/api/auth/admin/revoke-user-session", {
      sessionToken: otherSession,
    });
    const impersonating = app.browser();
    for (const [name, value] of adminBrowser.jar.cookies) impersonating.jar.cookies.set(name, value);
    await post(impersonating, "/api/auth/admin/impersonate-user", { userId: alice.userId });
    await post(impersonating, "/api/auth/admin/stop-impersonating");

    // Passwords: changed by the user, reset through the emailed link.
    const newPassword = "a brand new passphrase";
    secrets.add(newPassword);
    await post(aliceTab, "/api/auth/change-password", { currentPassword: PASSWORD, newPassword });
    // Emails are sent after their commit (the outbox): count from after the sign-up's.
    await smtp.next("alice@example.com");
    const before = smtp.count("alice@example.com");
    await post(app.browser(), "/api/auth/request-password-reset", {
      email: "alice@example.com",
      redirectTo: "/reset",
    });
    const mail = await smtp.next("alice@example.com", before);
    const link = new URL(mail.text.match(/https?:\/\/\S+/)![0]);
    const token = link.pathname.split("/").pop()!;
    secrets.add(token);
    const resetPassword = "the password after reset";
    secrets.add(resetPassword);
    await post(app.browser(), "/api/auth/reset-password", { newPassword: resetPassword, token });
    // The same link once more: refused, a reuse of a consumed credential.
    const reused = await app
      .browser()
      .post("/api/auth/reset-password", { newPassword: "yet another passphrase", token });
    expect(reused.status).toBe(400);

    // Second factor on and off.
    const bob = await app.signUp("bob@example.com");
    collect(bob.browser);
    const enabled = await post(bob.browser, "/api/auth/two-factor/enable", { password: PASSWORD });
    const secret = new URL(enabled.body.totpURI).searchParams.get("secret")!;
    secrets.add(secret);
    for (const code of enabled.body.backupCodes) secrets.add(code);
    const code = totp(secret);
    await post(bob.browser, "/api/auth/two-factor/verify-totp", { code });
    await post(bob.browser, "/api/auth/two-factor/disable", { password: PASSWORD });

    // Keys rotated (as the admin console does it) and an environment change from the CLI.
    const rotated = await fetch(`${app.url}/admin/api/rotate-keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminBrowser.jar.get("service-auth.jwt")}` },
    });
    expect(rotated.status, await rotated.clone().text()).toBe(200);
    const set = await cli(["env", "set", "AUDIT_PROBE", "a value nobody may log"]);
    expect(set.code, set.stderr).toBe(0);
    secrets.add("a value nobody may log");

    const all = await events();
    const types = new Set(all.map((e) => e.type));
    expect([...AUDIT_EVENT_TYPES].filter((t) => !types.has(t))).toEqual([]);

    const one = (type: string, pick: (e: AuditEventView) => boolean = () => true) => {
      const found = all.filter((e) => e.type === type && pick(e));
      expect(found.length, type).toBeGreaterThan(0);
      return found[0];
    };
    expect(one("sign-up", (e) => e.targetId === alice.userId)).toMatchObject({
      actorId: alice.userId,
      email: "alice@example.com",
      ipAddress: "127.0.0.1",
    });
    expect(one("sign-in.failed", (e) => e.details.reason !== "BANNED_USER")).toMatchObject({
      targetId: alice.userId,
      email: "alice@example.com",
      details: { reason: "INVALID_EMAIL_OR_PASSWORD", method: "/sign-in/email" },
    });
    expect(one("sign-in.failed", (e) => e.details.reason === "BANNED_USER").targetId).toBe(alice.userId);
    expect(one("user.banned")).toMatchObject({
      actorId: admin.userId,
      targetId: alice.userId,
      details: { reason: "spam" },
    });
    const banExpires = one("user.banned").details.expires as number;
    expect(Math.abs(banExpires - (started + 3_600_000))).toBeLessThan(120_000);
    expect(one("user.unbanned").actorId).toBe(admin.userId);
    expect(
      one("role.changed", (e) => e.details.role === "admin" && e.actorId === admin.userId).targetId,
    ).toBe(alice.userId);
    expect(one("role.changed", (e) => e.details.source === "cli").targetId).toBe(admin.userId);
    expect(one("session.revoked", (e) => e.details.method === "/admin/revoke-user-session")).toMatchObject({
      actorId: admin.userId,
      targetId: alice.userId,
    });
    expect(one("impersonation.started")).toMatchObject({ actorId: admin.userId, targetId: alice.userId });
    expect(one("impersonation.stopped")).toMatchObject({ actorId: admin.userId, targetId: alice.userId });
    expect(one("sign-out").targetId).toBe(alice.userId);
    expect(one("password.changed").targetId).toBe(alice.userId);
    expect(one("password.reset").targetId).toBe(alice.userId);
    expect(one("credential.reused").details).toMatchObject({
      method: "/reset-password",
      reason: "INVALID_TOKEN",
    });
    expect(one("second-factor.enabled").targetId).toBe(bob.userId);
    expect(one("second-factor.disabled").targetId).toBe(bob.userId);
    expect(one("keys.rotated")).toMatchObject({
      actorId: admin.userId,
      details: { source: "admin console" },
    });
    expect(one("env.changed").details).toEqual({ action: "set", names: ["AUDIT_PROBE"], source: "cli" });
    for (const e of all) {
      expect(e.time).toBeGreaterThanOrEqual(started);
      expect(e.time).toBeLessThanOrEqual(Date.now());
    }

    // No credential anywhere in any stored event (every field, as stored).
    const rows = stored();
    expect(rows).toContain("alice@example.com");
    expect(secrets.size).toBeGreaterThan(10);
    for (const s of secrets) if (s.length >= 6) expect(rows, "a secret was stored").not.toContain(s);
    expect(rows).not.toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]+/);

    // Filters: by user (email or id), type and time.
    const byEmail = await events({ user: "bob@example.com" });
    expect(byEmail.length).toBeGreaterThan(0);
    expect(byEmail.every((e) => e.targetId === bob.userId || e.actorId === bob.userId)).toBe(true);
    expect((await events({ user: bob.userId })).map((e) => e._id).sort()).toEqual(
      byEmail.map((e) => e._id).sort(),
    );
    expect((await events({ type: "sign-out" })).every((e) => e.type === "sign-out")).toBe(true);
    expect(await events({ since: Date.now() + 60_000 })).toEqual([]);

    // The CLI prints JSON lines, oldest first, filtered.
    const printed = await cli([
      "audit",
      "--user",
      "alice@example.com",
      "--type",
      "user.banned",
      "--since",
      "1h",
    ]);
    expect(printed.code, printed.stderr).toBe(0);
    const lines = printed.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      type: "user.banned",
      targetId: alice.userId,
      details: { reason: "spam" },
    });
    const everything = await cli(["audit", "--limit", "1000"]);
    const times = everything.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).time as number);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(times.length).toBe(all.length);
    const bad = await cli(["audit", "--type", "nonsense"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/Unknown audit event type/);
  });

  it("the retention cron's sweep deletes events older than AUDIT_RETENTION_DAYS, a batch per run, and nothing newer", async () => {
    const day = 86_400_000;
    // The app runs it as a cron (once per tick across instances), hourly.
    const cron = exampleOptions.crons?.jobs.find((job) => job.name === AUDIT_RETENTION_CRON);
    expect(cron?.path).toBe("audit:sweep");
    expect(cron?.schedule).toBe(`every ${3_600_000} ms`);
    for (let i = 0; i < 5; i++) {
      await app.backend.runMutation(
        internal.audit.record,
        { type: "env.changed", details: { probe: i } },
        { allowInternal: true },
      );
    }
    const sweep = (args: { batch?: number; now?: number }) =>
      app.backend.runMutation(internal.audit.sweep, args, { allowInternal: true });
    const count = async () => (await events({ type: "env.changed" })).length;
    const present = await count();
    await app.backend.env.set("AUDIT_RETENTION_DAYS", "30");
    // Nothing is 30 days old yet.
    expect((await sweep({})).value).toEqual({ deleted: 0, more: false });
    expect(await count()).toBe(present);
    // Seen from 31 days ahead, everything is: 2 per run, each full run scheduling the next.
    expect((await sweep({ batch: 2, now: Date.now() + 31 * day })).value).toEqual({ deleted: 2, more: true });
    await eventually(async () => expect(await events()).toEqual([]));
    const runs = (await app.backend.read(async (db) =>
      db.query("_scheduled_jobs" as never).collect(),
    )) as unknown as { name: string; state: string }[];
    const sweeps = runs.filter((job) => job.name === "audit:sweep");
    expect(sweeps.length).toBeGreaterThanOrEqual(Math.ceil((present - 2) / 2));
    expect(sweeps.every((job) => job.state === "done")).toBe(true);
    await app.backend.env.set("AUDIT_RETENTION_DAYS", "0");
    await expect(sweep({})).rejects.toThrow(/AUDIT_RETENTION_DAYS/);
    await app.backend.env.remove("AUDIT_RETENTION_DAYS");
  });
});
