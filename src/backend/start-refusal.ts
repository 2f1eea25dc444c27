/**
 * A start the operator must fix (a setting, the database, the port): its message is the whole
 * report, written for a person, so entry points print it as it is and exit 1, without a stack.
 */
export class StartRefusal extends Error {
  override name = "StartRefusal";
}
