/**
 * The filter drivers git knows from its config (read_convert_config): any `filter.<name>.<key>`
 * makes a driver, though only smudge, clean, process and required mean anything. Read here
 * once for both sides: the conversions decide which entries go through a driver
 * (plan/conversion.ts), the filter session runs them (write/filters.ts).
 */

export interface FilterDriver {
  name: string;
  smudge: string | undefined;
  clean: string | undefined;
  process: string | undefined;
  required: boolean;
}

/** The part of the config the drivers come from. */
export interface DriverConfig {
  keys(): Iterable<string>;
  get(key: string): string | undefined;
  getBool(key: string): boolean | undefined;
}

export function readFilterDrivers(config: DriverConfig): Map<string, FilterDriver> {
  const drivers = new Map<string, FilterDriver>();
  for (const key of config.keys()) {
    if (!key.startsWith('filter.')) continue;
    const last = key.lastIndexOf('.');
    if (last <= 'filter.'.length) continue; // filter.<key>: no driver name
    const name = key.slice('filter.'.length, last);
    if (drivers.has(name)) continue;
    drivers.set(name, {
      name,
      smudge: config.get(`filter.${name}.smudge`),
      clean: config.get(`filter.${name}.clean`),
      process: config.get(`filter.${name}.process`),
      required: config.getBool(`filter.${name}.required`) ?? false,
    });
  }
  return drivers;
}

/**
 * Whether a driver has something to run (smudge, clean or process): git then keeps its
 * entries out of the parallel queue and never streams them (classify_conv_attrs,
 * get_stream_filter_ca). One with only `clean` counts too; on checkout it changes nothing.
 */
export function hasCommand(driver: FilterDriver): boolean {
  return driver.smudge !== undefined || driver.clean !== undefined || driver.process !== undefined;
}
