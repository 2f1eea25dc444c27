/**
 * The admin console's live queries (`admin:viewer`, `admin:users`, `admin:sessions`,
 * `admin:keys`, `admin:audit`): each checks that the caller's role is `admin` through the normal identity path.
 */
import { createAdminFunctions } from "service-auth/auth";

export const { viewer, users, sessions, keys, audit } = createAdminFunctions();
