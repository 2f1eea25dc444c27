/**
 * Runs once before any test file: the examples' web frameworks (compat/frameworks) are installed
 * beside the core and linked into node_modules (scripts/side-install.ts), so that the framework
 * tests and src/nextjs, src/tanstack-start find them. A no-op once they resolve.
 */
import { ensureSideInstall } from "../scripts/side-install.ts";

export default function setup(): void {
  ensureSideInstall("compat/frameworks");
}
