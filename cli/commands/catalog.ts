import type { Command } from 'commander';
import { listHardware, loadHardware } from '../../sim/hardware/load-profile.js';
import { getModel, listModels } from '../../sim/models/load-model.js';
import { kvBytes } from '../../sim/models/model.js';

export function registerCatalog(program: Command): void {
  program
    .command('policies')
    .description('list the registered policies with their options and sources')
    .option('--json', 'machine-readable')
    .action(async (o) => {
      // the policies load here, not for `hardware` and `models`
      const [{ registerBuiltinPolicies }, { listPolicies }] = await Promise.all([import('../../policies/builtin.js'), import('../../policies/registry.js')]);
      registerBuiltinPolicies();
      const defs = listPolicies();
      if (o.json) {
        console.log(JSON.stringify(defs.map(({ create: _c, ...d }) => d), null, 2));
        return;
      }
      for (const d of defs) {
        console.log(`${d.name}${d.oracle ? '  [ORACLE: reads the future; a bound, not deployable]' : ''}`);
        console.log(`  ${d.description}`);
        console.log(`  source: ${d.source}`);
        for (const opt of d.options) {
          console.log(`  --opt ${opt.name}=<${opt.choices ? opt.choices.join('|') : opt.type}>  (default ${JSON.stringify(opt.default)}) ${opt.description}`);
        }
      }
    });
  const hw = program.command('hardware').description('hardware presets');
  hw.command('list', { isDefault: true })
    .description('list hardware presets')
    .action(() => {
      for (const h of listHardware()) console.log(`${h.name.padEnd(24)} ${h.description}`);
    });
  hw.command('show')
    .description('print a resolved hardware profile (JSON, with sources) to copy and edit')
    .argument('<name|file>')
    .action((name) => console.log(JSON.stringify(loadHardware(name), null, 2)));
  program
    .command('models')
    .description('list model presets with KV bytes per token')
    .action(() => {
      for (const m of listModels()) {
        const spec = getModel(m.name);
        const perTok = spec.layers * kvBytes(spec, 1, 16);
        console.log(`${m.name.padEnd(14)} ${String(spec.layers).padStart(3)} layers  KV ${(perTok / 1024).toFixed(1).padStart(7)} KiB/token FP16  ${m.description}`);
      }
    });
}
