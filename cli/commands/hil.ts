// `kvtier hil ...` commands. For now: `kvtier hil doctor`.
import type { Command } from 'commander';
import { formatHilDoctor, hilDoctor } from '../../hil/doctor.js';

export function registerHil(program: Command): void {
  const hil = program.command('hil').description('hardware-in-the-loop: real memory, real kernels');
  hil
    .command('doctor')
    .description('say which HIL backends (cuda, host) are available here, and why not')
    .option('--json', 'print the report as JSON')
    .action((opts: { json?: boolean }) => {
      const report = hilDoctor();
      console.log(opts.json ? JSON.stringify(report, null, 2) : formatHilDoctor(report));
    });
}
