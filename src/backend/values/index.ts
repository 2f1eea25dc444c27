/** Public entry `service-auth/values`: validators and their inferred types. */
export { v } from "./validators.ts";
export type { Id, Infer, ObjectType, PropertyValidators, Validator } from "./validators.ts";
export { validate, describe } from "./validate.ts";
