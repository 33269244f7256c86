import type { Command } from 'commander';
import { listHardware, loadHardware } from '../../sim/hardware/load-profile.js';
import { getModel, listModels } from '../../sim/models/load-model.js';
import { kvBytes } from '../../sim/models/model.js';
import { catalogOf, formatPolicyList, readPolicyCatalog } from '../policy-catalog.js';

export function registerCatalog(program: Command): void {
  program
    .command('policies')
    .description('list the registered policies with their options and sources')
    .option('--json', 'machine-readable')
    .action(async (o) => {
      // the catalog file (written from the registry by npm run docs) answers without loading the
      // policies; the registry where the file cannot be read
      let defs = readPolicyCatalog();
      if (!defs) {
        const [{ registerBuiltinPolicies }, { listPolicies }] = await Promise.all([import('../../policies/builtin.js'), import('../../policies/registry.js')]);
        registerBuiltinPolicies();
        defs = catalogOf(listPolicies());
      }
      console.log(o.json ? JSON.stringify(defs, null, 2) : formatPolicyList(defs));
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
