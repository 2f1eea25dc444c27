/**
 * The admin console's live queries (`admin:viewer`, `admin:users`, `admin:sessions`,
 * `admin:connections`, `admin:keys`, `admin:audit`, `admin:jobs`) and `admin:disconnect`: each checks that the caller's role is `admin` through the normal identity path.
 */
import { createAdminFunctions } from "service-auth/app";

export const { viewer, users, sessions, connections, disconnect, keys, audit, jobs } = createAdminFunctions();
