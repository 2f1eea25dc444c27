// Scratch: node:http server answering POST with a fixed JSON after reading the body (no DB).
import { createServer } from "node:http";
import { announceReady } from "./bench/lib/spawn.ts";
const json = JSON.stringify({ status: "success", value: { _id: "abcdefghijklmnopqrstuvwxyzabcd", _creationTime: 1763776000000.123, key: "key-000000", value: 0, label: "item key-000000" } });
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    JSON.parse(Buffer.concat(chunks).toString());
    res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(json) });
    res.end(json);
  });
});
server.listen(0, "127.0.0.1", () => announceReady((server.address() as any).port));
process.once("SIGTERM", () => process.exit(0));
