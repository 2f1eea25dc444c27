/**
 * `GET /metrics` in Prometheus' text format, never open by default: on a port of its own
 * (`METRICS_PORT`, bound to 127.0.0.1 unless `METRICS_HOST` says otherwise) and/or on the public
 * port behind a bearer token (`METRICS_TOKEN`, compared in constant time). With neither, the
 * public `/metrics` answers 404. In cluster mode one scrape covers every worker (`cluster.ts`).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { AppError } from "../errors.ts";
import { bearerToken } from "../http/bearer-token.ts";
import { errorResponse, type JsonResponse } from "../http/json-response.ts";
import { listenErrorOf } from "../http/listen-error.ts";
import { logger } from "../logger.ts";
import { type SettingProblem, SettingsRefusal, settingProblem } from "../settings/problems.ts";
import { collectProcessMetrics, metricsRegistry } from "./metrics.ts";

/**
 * Where `/metrics` is served (`ServiceOptions.metrics`); leave both unset to serve it nowhere.
 *
 * @example
 * ```ts
 * import type { MetricsOptions } from "service-auth/server";
 *
 * // GET /metrics on 127.0.0.1:9464, and on the public port for `Authorization: Bearer <token>`.
 * const metrics: MetricsOptions = { port: 9464, token: process.env.METRICS_TOKEN };
 * await startService({ ...app, metrics });
 * ```
 */
export interface MetricsOptions {
  /** A port of its own for `GET /metrics` (0 picks a free one). */
  port?: number;
  /** Host name that port binds to (default 127.0.0.1: reachable from this machine only). */
  hostname?: string;
  /**
   * Bearer token: with it, `GET /metrics` on the public port answers to
   * `Authorization: Bearer <token>` (and the own port, if any, asks for it too).
   */
  token?: string;
}

/** Shortest `METRICS_TOKEN` accepted: a guessable token would open the metrics to anyone. */
export const MIN_METRICS_TOKEN_LENGTH = 16;

/**
 * The metrics settings from the environment: `METRICS_PORT`, `METRICS_HOST`, `METRICS_TOKEN`.
 * Undefined when neither a port nor a token is set. A bad value throws a {@link SettingsRefusal}
 * naming each (the token's value masked).
 *
 * @example
 * ```ts
 * import { metricsSetting, startService } from "service-auth/server";
 *
 * // METRICS_PORT=9464 and/or METRICS_TOKEN=…; with neither, /metrics answers 404.
 * await startService({ ...app, metrics: metricsSetting() });
 * ```
 */
export function metricsSetting(
  env: Record<string, string | undefined> = process.env,
): MetricsOptions | undefined {
  const portText = env.METRICS_PORT?.trim();
  const token = env.METRICS_TOKEN?.trim() || undefined;
  const problems: SettingProblem[] = [];
  let port: number | undefined;
  if (portText) {
    port = Number(portText);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      problems.push(
        settingProblem(
          "METRICS_PORT",
          env.METRICS_PORT,
          "not a port number (0 to 65535)",
          "set METRICS_PORT=9464, or another free port (served on 127.0.0.1 unless METRICS_HOST says otherwise)",
        ),
      );
  }
  if (token !== undefined && token.length < MIN_METRICS_TOKEN_LENGTH)
    problems.push(
      settingProblem(
        "METRICS_TOKEN",
        env.METRICS_TOKEN,
        `shorter than ${MIN_METRICS_TOKEN_LENGTH} characters: guessable`,
        "set METRICS_TOKEN=$(openssl rand -hex 32)",
      ),
    );
  if (problems.length > 0) throw new SettingsRefusal(problems);
  if (port === undefined && token === undefined) return undefined;
  return { port, token, hostname: env.METRICS_HOST?.trim() || undefined };
}

/** The text of one scrape: this process's metrics, or (in a cluster) every worker's. */
export type MetricsSource = () => Promise<string>;

export const localMetrics: MetricsSource = () => metricsRegistry.metrics();

/** Checks a presented `Authorization` header against the token, in constant time. */
export function tokenCheck(token: string | undefined): (authorization: string | undefined) => boolean {
  if (token === undefined) return () => true;
  // Digests have one length, so the comparison takes the same time whatever was presented.
  const expected = createHash("sha256").update(token).digest();
  return (authorization) => {
    const presented = bearerToken(authorization) ?? "";
    return timingSafeEqual(createHash("sha256").update(presented).digest(), expected);
  };
}

/** Whether a request target is `/metrics` (with any query string). */
function isMetricsPath(url: string | undefined): boolean {
  return url === "/metrics" || url?.startsWith("/metrics?") === true;
}

function sendJson(res: ServerResponse, answer: JsonResponse, extra: Record<string, string> = {}): void {
  res.writeHead(answer.status, { ...answer.headers, ...extra });
  res.end(answer.body);
}

/** Answers a `/metrics` request: 401 without the right token, else the scrape. */
function serveScrape(
  req: IncomingMessage,
  res: ServerResponse,
  authorized: (authorization: string | undefined) => boolean,
  source: MetricsSource,
): void {
  if (!authorized(req.headers.authorization)) {
    sendJson(res, errorResponse(new AppError("UNAUTHORIZED", "The metrics need their bearer token")), {
      "www-authenticate": 'Bearer realm="metrics"',
    });
    return;
  }
  source().then(
    (text) => {
      res.writeHead(200, {
        "content-type": metricsRegistry.contentType,
        "cache-control": "no-store",
        "content-length": String(Buffer.byteLength(text)),
      });
      res.end(req.method === "HEAD" ? undefined : text);
    },
    (error) => {
      logger.error("metrics scrape failed", { error: String(error) });
      sendJson(res, errorResponse(new AppError("INTERNAL", "The metrics could not be collected")));
    },
  );
}

/**
 * The public port's `/metrics`: served with the token, 404 without one (also when only a port of
 * its own is set); every other request goes to `next`.
 */
export function publicMetricsListener(
  options: MetricsOptions | undefined,
  source: MetricsSource,
  next: RequestListener,
): RequestListener {
  const token = options?.token;
  const authorized = tokenCheck(token);
  return (req, res) => {
    if (!isMetricsPath(req.url) || (req.method !== "GET" && req.method !== "HEAD")) return next(req, res);
    if (token === undefined) {
      sendJson(res, errorResponse(new AppError("NOT_FOUND", "Not found")));
      return;
    }
    serveScrape(req, res, authorized, source);
  };
}

/** A running metrics port. */
export interface MetricsServer {
  port: number;
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` on `options.port` (bound to `options.hostname`, default 127.0.0.1);
 * with `options.token` it asks for it there too. Anything else answers 404.
 */
export function listenMetrics(
  options: MetricsOptions & { port: number },
  source: MetricsSource,
): Promise<MetricsServer> {
  const authorized = tokenCheck(options.token);
  const hostname = options.hostname ?? "127.0.0.1";
  const server = createServer((req, res) => {
    if (isMetricsPath(req.url) && (req.method === "GET" || req.method === "HEAD"))
      return serveScrape(req, res, authorized, source);
    sendJson(res, errorResponse(new AppError("NOT_FOUND", "Not found")));
  });
  // A scraper's keep-alive connection must not hold up the service's stop.
  const closeAll = () => server.closeAllConnections();
  return new Promise((resolve, reject) => {
    const refused = (error: NodeJS.ErrnoException) =>
      reject(listenErrorOf(error, options.port, hostname, "METRICS_PORT"));
    server.once("error", refused);
    server.listen(options.port, hostname, () => {
      server.off("error", refused);
      const { port } = server.address() as AddressInfo;
      logger.info("metrics served", { url: `http://${hostname}:${port}/metrics` });
      resolve({
        port,
        url: `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}/metrics`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            closeAll();
          }),
      });
    });
  });
}

/** Starts what serving metrics needs in every process that has them (the process metrics). */
export function enableMetrics(): void {
  collectProcessMetrics();
}
