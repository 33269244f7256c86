/** The report pages a sweep writes when run from the CLI (studies/sweep-reporter.ts). */
import type { SweepReporter } from '../studies/sweep-reporter.js';
import { writeServeSweepReport } from './serve-sweep-report.js';
import { writeSweepReport } from './sweep-dir-report.js';

export const SWEEP_REPORTERS: SweepReporter = { attention: writeSweepReport, serve: writeServeSweepReport };
