// Where a benchmark's CPU went on the whole machine, not only in the process it measures: the busy
// time of every core (/proc/stat) and of the broker and Redis processes (/proc/<pid>/stat), so a
// figure says whether the machine was saturated and which process took the cores. Linux only; on
// another system every reading is NaN.
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const CLOCK_TICKS = 100;

/** Milliseconds of CPU (user + system) process `pid` has used so far, or NaN when it is gone. */
export function processCpuMilliseconds(pid: number): number {
  try {
    // Fields after the command (which may hold spaces) start at the state, field 3.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** Milliseconds of CPU every core together has spent busy (not idle, not waiting for I/O) so far. */
export function machineBusyMilliseconds(): number {
  try {
    // cpu  user nice system idle iowait irq softirq steal ...: busy is all but idle and iowait.
    const [user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
      .split('\n', 1)[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return ((user! + nice! + system! + irq! + softirq! + (steal ?? 0)) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/**
 * The pids of the processes whose command name (/proc/<pid>/comm) is `name` and, when given, whose
 * command line (arguments joined by NUL) holds `argument`.
 */
export function pidsNamed(name: string, argument?: string): number[] {
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return pids;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== name) continue;
      if (argument === undefined || readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(argument))
        pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** CPU milliseconds so far: the whole machine's busy time, the broker's and Redis's. */
export interface MachineCpu {
  readonly machine: number;
  readonly broker: number;
  readonly redis: number;
}

/**
 * Reads the machine's, RabbitMQ's and Redis's (redis-server) CPU time so far. RabbitMQ is the
 * beam.smp started with `-s rabbit boot`: `rabbitmqctl` runs a short-lived beam.smp of its own.
 */
export function readMachineCpu(): MachineCpu {
  const sum = (pids: number[]) =>
    pids.length === 0 ? Number.NaN : pids.reduce((total, pid) => total + processCpuMilliseconds(pid), 0);
  return {
    machine: machineBusyMilliseconds(),
    broker: sum(pidsNamed('beam.smp', 'rabbit\0boot')),
    redis: sum(pidsNamed('redis-server')),
  };
}

/** What each part used between two readings, divided by `count` (per completion, say). */
export function machineCpuPer(before: MachineCpu, after: MachineCpu, count: number): MachineCpu {
  return {
    machine: (after.machine - before.machine) / count,
    broker: (after.broker - before.broker) / count,
    redis: (after.redis - before.redis) / count,
  };
}
