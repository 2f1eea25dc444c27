/**
 * The server's reader of client messages (`parseClientMessage`), without a socket: every message
 * type's accepted shape, and each refusal's code, message and echoed id.
 */
import { describe, expect, it } from "vitest";
import { PROTOCOL_VERSIONS } from "../../src/backend/sync/connection.ts";
import { PROTOCOL_VERSION, ProtocolError, parseClientMessage } from "../../src/protocol/messages.ts";

/** The refusal `text` gets, as a plain object (code, message, id). */
function refusal(text: string): { code: string; message: string; id?: unknown } {
  try {
    parseClientMessage(text);
  } catch (e) {
    expect(e).toBeInstanceOf(ProtocolError);
    const err = e as ProtocolError;
    expect(err).toBeInstanceOf(Error);
    return err.id === undefined
      ? { code: err.code, message: err.message }
      : { code: err.code, message: err.message, id: err.id };
  }
  throw new Error(`accepted: ${text}`);
}

const parse = (m: unknown) => parseClientMessage(JSON.stringify(m));

describe("parseClientMessage", () => {
  it("speaks the shared protocol version", () => {
    expect(PROTOCOL_VERSIONS).toEqual([PROTOCOL_VERSION]);
  });

  it("refuses text that is not JSON", () => {
    expect(refusal("{not json")).toEqual({ code: "BAD_MESSAGE", message: "Message is not valid JSON" });
    expect(refusal("")).toEqual({ code: "BAD_MESSAGE", message: "Message is not valid JSON" });
  });

  it("refuses JSON that is not an object with a string type", () => {
    const expected = { code: "BAD_MESSAGE", message: 'Message must be a JSON object with a "type"' };
    for (const text of [
      "null",
      "[]",
      '[{"type":"ping"}]',
      "42",
      '"ping"',
      "{}",
      '{"type":1}',
      '{"type":null}',
    ]) {
      expect(refusal(text), text).toEqual(expected);
    }
  });

  it("reads connect with a token, null or none", () => {
    expect(parse({ type: "connect", v: 1, token: "t" })).toEqual({ type: "connect", v: 1, token: "t" });
    expect(parse({ type: "connect", v: 2, token: null })).toEqual({ type: "connect", v: 2, token: null });
    expect(parse({ type: "connect", v: 1 })).toEqual({ type: "connect", v: 1, token: null });
  });

  it("refuses connect without a numeric version or with a token that is no string", () => {
    expect(refusal('{"type":"connect"}')).toEqual({
      code: "BAD_MESSAGE",
      message: 'connect needs a numeric "v"',
    });
    expect(refusal('{"type":"connect","v":"1"}')).toEqual({
      code: "BAD_MESSAGE",
      message: 'connect needs a numeric "v"',
    });
    for (const token of [1, false, {}, []]) {
      expect(refusal(JSON.stringify({ type: "connect", v: 1, token }))).toEqual({
        code: "BAD_MESSAGE",
        message: "token must be a string or null",
      });
    }
  });

  it("reads authenticate with a token or null, and refuses anything else", () => {
    expect(parse({ type: "authenticate", token: "t" })).toEqual({ type: "authenticate", token: "t" });
    expect(parse({ type: "authenticate", token: null })).toEqual({ type: "authenticate", token: null });
    for (const message of [{ type: "authenticate" }, { type: "authenticate", token: 5 }]) {
      expect(refusal(JSON.stringify(message))).toEqual({
        code: "BAD_MESSAGE",
        message: "authenticate needs a token (string or null)",
      });
    }
  });

  it("reads ping, dropping anything else it carries", () => {
    expect(parse({ type: "ping", id: 3, extra: true })).toEqual({ type: "ping" });
  });

  it("reads unsubscribe with an id and refuses it without one", () => {
    expect(parse({ type: "unsubscribe", id: 4 })).toEqual({ type: "unsubscribe", id: 4 });
    expect(parse({ type: "unsubscribe", id: "s" })).toEqual({ type: "unsubscribe", id: "s" });
    expect(refusal('{"type":"unsubscribe"}')).toEqual({
      code: "BAD_MESSAGE",
      message: "unsubscribe needs an id",
    });
  });

  for (const type of ["subscribe", "query", "mutation", "action"]) {
    it(`reads ${type} with its id, path and args`, () => {
      expect(parse({ type, id: 1, path: "m:f", args: { a: 1 } })).toEqual({
        type,
        id: 1,
        path: "m:f",
        args: { a: 1 },
      });
      // Missing or null args are an empty object.
      expect(parse({ type, id: "x", path: "m:f" })).toEqual({ type, id: "x", path: "m:f", args: {} });
      expect(parse({ type, id: "x", path: "m:f", args: null })).toEqual({
        type,
        id: "x",
        path: "m:f",
        args: {},
      });
    });

    it(`refuses ${type} without an id, a path or object args`, () => {
      expect(refusal(JSON.stringify({ type, path: "m:f" }))).toEqual({
        code: "BAD_MESSAGE",
        message: `${type} needs an id (string of 1-64 chars or integer)`,
      });
      for (const path of [undefined, "", 7]) {
        expect(refusal(JSON.stringify({ type, id: 2, path }))).toEqual({
          code: "BAD_MESSAGE",
          message: `${type} needs a "path"`,
          id: 2,
        });
      }
      for (const args of [[1], "a", 3, false]) {
        expect(refusal(JSON.stringify({ type, id: 2, path: "m:f", args }))).toEqual({
          code: "INVALID_ARGUMENTS",
          message: "args must be an object",
          id: 2,
        });
      }
    });
  }

  it("accepts ids of 1 to 64 characters and safe integers only", () => {
    for (const id of ["a", "x".repeat(64), 0, -3, Number.MAX_SAFE_INTEGER]) {
      expect(parse({ type: "query", id, path: "m:f" })).toMatchObject({ id });
    }
    for (const id of ["", "x".repeat(65), 1.5, Number.MAX_SAFE_INTEGER + 1, null, true, {}, []]) {
      expect(refusal(JSON.stringify({ type: "query", id, path: "m:f" })), JSON.stringify(id)).toEqual({
        code: "BAD_MESSAGE",
        message: "query needs an id (string of 1-64 chars or integer)",
      });
    }
  });

  it("names an unknown type, cut to 40 characters, and echoes a usable id", () => {
    expect(refusal('{"type":"frobnicate","id":5}')).toEqual({
      code: "UNKNOWN_MESSAGE_TYPE",
      message: 'Unknown message type "frobnicate"',
      id: 5,
    });
    expect(refusal(JSON.stringify({ type: "y".repeat(100), id: "z".repeat(65) }))).toEqual({
      code: "UNKNOWN_MESSAGE_TYPE",
      message: `Unknown message type "${"y".repeat(40)}"`,
    });
  });

  it("does not take names every object has for message types", () => {
    for (const type of ["toString", "constructor", "__proto__", "hasOwnProperty"]) {
      expect(refusal(JSON.stringify({ type, id: 1 }))).toEqual({
        code: "UNKNOWN_MESSAGE_TYPE",
        message: `Unknown message type "${type}"`,
        id: 1,
      });
    }
  });
});
