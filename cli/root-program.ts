/** The root of the kvtier command line, without any command: what every way of building it shares. */
import { Command } from 'commander';

export function rootProgram(): Command {
  return new Command()
    .name('kvtier')
    .description('Tiered KV-cache simulator for long-context LLM inference (HBM, DRAM, CXL, NVMe), with hardware in the loop')
    .version('0.1.0')
    .showHelpAfterError()
    .exitOverride();
}
