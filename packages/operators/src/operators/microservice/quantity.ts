/**
 * Resource quantities (`25m`, `128Mi`, `0.5`) in the canonical form the API server stores.
 * The API server rewrites quantities (`1000m` → `1`, `1024Mi` → `1Gi`); rendering the canonical
 * form up front keeps "current contains desired" true after a write, so the operator does not
 * rewrite the same Deployment forever.
 *
 * Guarantee (held by `test/integration/microservice/quantity-differential.test.ts` against the
 * API server, for random quantities): the API server stores the spelling returned here unchanged,
 * and it is the amount given. (For some inputs the API server would keep the input's own
 * spelling, `1.125` say, where this returns `1125m`: the operator writes only what this returns.)
 *
 * Supported input: a non-negative decimal number with an optional SI suffix (`m`, `k`, `M`, `G`,
 * `T`, `P`, `E`) or binary suffix (`Ki` … `Ei`), at most 2^63 − 1 units. Exponent forms (`1e3`)
 * and values finer than a milli-unit are rejected.
 * @module
 */

const QUANTITY = /^([0-9]+)(?:\.([0-9]+))?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;
const DECIMAL_SUFFIXES = ['m', '', 'k', 'M', 'G', 'T', 'P', 'E'];
const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const DECIMAL_EXPONENT: Record<string, number> = { m: -1, '': 0, k: 1, M: 2, G: 3, T: 4, P: 5, E: 6 };
const BINARY_EXPONENT: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const MAX_UNITS = 2n ** 63n - 1n;

/** The API server's canonical spelling of `quantity`; throws a readable Error when unsupported. */
export function canonicalQuantity(quantity: string): string {
  const match = QUANTITY.exec(quantity);
  if (!match) throw new Error(`${JSON.stringify(quantity)} is not a quantity such as 25m, 0.5 or 128Mi`);
  const [, whole = '0', fraction = '', suffix = ''] = match;
  const digits = BigInt(whole + fraction);
  const scale = 10n ** BigInt(fraction.length);
  // Past 2^63 - 1 units the API server does not keep a quantity as sent: it caps binary ones
  // ("8Ei" comes back as 9223372036854775807) and overflows decimal ones ("1000000E" comes back
  // as "1"), so whatever we wrote would differ from what we read back, forever.
  const binary = BINARY_EXPONENT[suffix];
  if (digits * milliPerUnit(suffix) > MAX_UNITS * 1000n * scale) throw new Error(`${JSON.stringify(quantity)} is larger than the API server keeps (${MAX_UNITS})`);

  if (binary !== undefined) {
    const numerator = digits * 1024n ** BigInt(binary);
    if (numerator % scale === 0n && numerator / scale >= 1024n) return binaryForm(numerator / scale);
    // Below 1Ki or not a whole number of bytes: the API server falls back to decimal SI.
    return decimalForm(numerator * 1000n, scale, quantity);
  }
  const exponent = DECIMAL_EXPONENT[suffix] ?? 0;
  return decimalForm(digits * 1000n ** BigInt(exponent + 1), scale, quantity);
}

/** The amount of a quantity `canonicalQuantity` accepts (a whole number of milli-units), to compare two of them. */
export function quantityMilli(quantity: string): bigint {
  canonicalQuantity(quantity); // throws for what it does not accept
  const [, whole = '0', fraction = '', suffix = ''] = QUANTITY.exec(quantity)!;
  return (BigInt(whole + fraction) * milliPerUnit(suffix)) / 10n ** BigInt(fraction.length);
}

/** Milli-units in one unit of `suffix` (`Ki`: 1,024,000; `m`: 1). */
function milliPerUnit(suffix: string): bigint {
  const binary = BINARY_EXPONENT[suffix];
  return binary !== undefined ? 1000n * 1024n ** BigInt(binary) : 1000n ** BigInt((DECIMAL_EXPONENT[suffix] ?? 0) + 1);
}

/** `milliNumerator / scale` milli-units, spelled with the largest SI suffix that keeps it whole. */
function decimalForm(milliNumerator: bigint, scale: bigint, input: string): string {
  if (milliNumerator % scale !== 0n) throw new Error(`${JSON.stringify(input)} is finer than a milli-unit`);
  let value = milliNumerator / scale;
  if (value === 0n) return '0';
  let index = 0;
  while (index < DECIMAL_SUFFIXES.length - 1 && value % 1000n === 0n) {
    value /= 1000n;
    index++;
  }
  return `${value}${DECIMAL_SUFFIXES[index]}`;
}

function binaryForm(bytes: bigint): string {
  let value = bytes;
  let index = 0;
  while (index < BINARY_SUFFIXES.length - 1 && value % 1024n === 0n) {
    value /= 1024n;
    index++;
  }
  return `${value}${BINARY_SUFFIXES[index]}`;
}
