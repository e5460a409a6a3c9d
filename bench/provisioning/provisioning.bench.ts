// `npm run bench` runs every *.bench.ts; this one is bench/provisioning/run.ts (see there).
import './run.ts';
