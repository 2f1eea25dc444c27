/** Public entry `service-auth/values`: validators and their inferred types. */

export { describe, validate } from "./validate.ts";
export type { Id, Infer, ObjectType, PropertyValidators, Validator } from "./validators.ts";
export { v } from "./validators.ts";
