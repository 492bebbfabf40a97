// The error a wrong option raises, at construction or reconfiguration, before anything runs: its
// own module because the intake, the receiver and the standalone server all throw it.

/** An option is missing or out of range; the message names it and what it accepts. */
export class ConfigurationError extends Error {
  /** Always `ConfigurationError`, to tell it apart from other errors. */
  override name = 'ConfigurationError';
}
