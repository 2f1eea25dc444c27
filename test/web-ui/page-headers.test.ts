/** The web UI's page is served with a content security policy and the usual hardening headers. */
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ExampleApp, startExampleApp } from "../helpers/example-app.ts";

let app: ExampleApp;
beforeAll(async () => {
  app = await startExampleApp();
});
afterAll(() => app?.close());

it("serves the page with CSP, nosniff and no framing", async () => {
  const res = await fetch(`${app.url}/`);
  expect(res.status).toBe(200);
  const csp = res.headers.get("content-security-policy") ?? "";
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  await res.text();
});
