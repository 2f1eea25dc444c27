/**
 * `service-auth/app`: the product. An app is one definition (`defineApp`) that
 * `service-auth start` serves with every setting, check and default the README promises.
 */
// requirements §4.1: the MessageChannel stand-in loads before anything that handles HTTP.
import "../auth/message-channel-polyfill.ts";

export { getAuthUserId } from "../auth/index.ts";
export type { AppAuthOptions, AuthDefaultSwitches, AuthDefinition, AuthOptionsContext } from "./auth.ts";
export { authTables, defineAuth } from "./auth.ts";
export { browserScript } from "./browser-script.ts";
export type { AppDefinition, AppInput } from "./define-app.ts";
export { defineApp, isAppDefinition } from "./define-app.ts";
export type { StartAppOptions } from "./start-app.ts";
export { startApp } from "./start-app.ts";
