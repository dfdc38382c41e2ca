/**
 * The error `toStructuralSchema` (and so `defineCustomResource`) throws for a schema the API
 * server would refuse, or that could never hold a value: the message starts with the path.
 * @module
 */
export class SchemaConversionError extends Error {
  override readonly name = 'SchemaConversionError';
  /** Where the problem is, e.g. `.spec.ports[*].port`. */
  readonly path: string;
  constructor(path: string, message: string) {
    super(`${path || '<root>'}: ${message}`);
    this.path = path;
  }
}
