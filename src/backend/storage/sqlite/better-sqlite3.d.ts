/**
 * better-sqlite3 is installed under the alias `@service-auth/better-sqlite3` (decision 48): under
 * its own name, Better Auth's optional peer range (`^12`) would make npm install a second copy, 12,
 * beside it in every app, compiled from source at install. Its types are @types/better-sqlite3's.
 */
declare module "@service-auth/better-sqlite3" {
  import Database = require("better-sqlite3");
  export = Database;
}
