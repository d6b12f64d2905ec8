import { PcheckoutError } from './errors.js';

/** The most worker threads a checkout starts, whether the count comes from an option or config. */
export const MAX_WORKERS = 1024;

/** The one place that words "Expected X for option Y but received Z". */
export function invalidOption(name: string, expected: string, value: unknown): PcheckoutError {
  return new PcheckoutError(
    'ERR_INVALID_OPTION',
    `Expected ${expected} for option ${name} but received ${describe(value)}`,
  );
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value}' of type string`;
  if (value === null) return 'null';
  if (typeof value === 'object') return `an ${Array.isArray(value) ? 'array' : 'object'}`;
  return `${String(value)} of type ${typeof value}`;
}

export function optionalInteger(
  name: string,
  value: unknown,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidOption(name, `an integer between ${min} and ${max}`, value);
  }
  return value;
}

export function optionalString(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0) {
    throw invalidOption(name, 'a non-empty string', value);
  }
  return value;
}

export function optionalFunction<T extends (...args: never[]) => unknown>(
  name: string,
  value: unknown,
): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'function') throw invalidOption(name, 'a function', value);
  return value as T;
}

export function optionalSignal(name: string, value: unknown): AbortSignal | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof AbortSignal)) throw invalidOption(name, 'an AbortSignal', value);
  return value;
}

export function optionalBoolean(name: string, value: unknown): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw invalidOption(name, 'a boolean', value);
  return value;
}
