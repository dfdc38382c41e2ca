/**
 * How every YAML document the CLI prints or writes is stringified (pass to `yaml`'s `stringify`):
 * long lines unfolded, and strings quoted as YAML 1.1 reads them. kubectl (and most Kubernetes
 * tooling) reads YAML 1.1, where `yes`, `no`, `on`, `off`, `y`, `n` are booleans and `1_000` a
 * number: a namespace or name spelled so (each a valid DNS label) printed plain would come back as
 * something else. A module of its own, without `yaml`: the commands that print YAML only for
 * `-o yaml` load the printer then (start-up, issue 17).
 * @module
 */
export const PRINTED_YAML = { lineWidth: 0, version: '1.1' } as const;
