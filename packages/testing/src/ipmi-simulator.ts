import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A simulated host's BMC: OpenIPMI's `ipmi_sim` on 127.0.0.1 and a random free UDP port, its chassis
 * power delegated to a script that keeps the state in a file (docs/design.md#real-peers-in-tests).
 * Each simulator has its own directory and process; `stop()` ends only that process.
 */
export interface IpmiSimulator {
  readonly address: '127.0.0.1';
  readonly port: number;
  readonly login: string;
  readonly password: string;
  /**
   * The GUID as `ipmitool mc guid` prints it (normalised: 32 lower-case hex digits) — what an operator
   * copies into fencing.yaml. ipmitool picks the byte order from the GUID's version bits, so it is
   * read back from the running simulator rather than computed.
   */
  readonly guid: string;
  /** The chassis power as the simulated host has it. */
  power(): 'on' | 'off';
  /** Sets the chassis power directly (the host "boots" or "crashes" by itself). */
  setPower(state: 'on' | 'off'): void;
  /** Every `set power` the BMC carried out, oldest first (`0` = off, `1` = on). */
  powerCommands(): string[];
  stop(): Promise<void>;
}

export interface IpmiSimulatorOptions {
  login?: string;
  password?: string;
  /** 32 hex digits written to lan.conf's `guid`. */
  guid?: string;
  initialPower?: 'on' | 'off';
  /**
   * Shell commands the chassis runs when it switches the power: `off` for a power-off, `on` for a
   * power-on — e.g. stop and start the process that stands for the host, so that fencing through
   * this BMC has a real effect. Each runs to its end before the new power state is recorded (a
   * status query never reads "off" while the host still runs), with no input or output.
   */
  chassisCommands?: { off?: string; on?: string };
}

/** A UDP port on 127.0.0.1 that was free a moment ago. */
async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

const CHASSIS_SCRIPT = `#!/bin/sh
# Called by ipmi_sim as: <script> <mc> get power  |  <script> <mc> set power <0|1>
here=$(dirname "$0")
state="$here/power"
case "$2" in
  get) echo "power:$(cat "$state")" ;;
  set) if [ "$3" = power ]; then
         # The chassis command first: the power reads "off" only once the host really is off.
         if [ "$4" = 0 ]; then hook="$here/after-power-off"; else hook="$here/after-power-on"; fi
         "$hook" < /dev/null > /dev/null 2>&1
         echo "$4" > "$state"; echo "$4" >> "$here/commands"
       fi ;;
  *) exit 1 ;;
esac
`;

/**
 * Starts ipmi_sim and waits until `ipmitool power status` answers.
 * @throws Error when the simulator does not answer within 10 seconds
 */
export async function startIpmiSimulator(options: IpmiSimulatorOptions = {}): Promise<IpmiSimulator> {
  const login = options.login ?? 'admin';
  // IPMI v2 passwords are at most 20 bytes.
  const password = options.password ?? `pw-${Math.random().toString(36).slice(2, 12)}`;
  const guidHex =
    options.guid ?? [...Array(32)].map(() => Math.floor(Math.random() * 16).toString(16)).join('');
  const directory = mkdtempSync(join(tmpdir(), 'lifeguard-ipmisim-'));
  const script = writeSimulatorFiles(directory, options);
  const { child: running, port } = await spawnSimulator(directory, { script, login, password, guidHex });
  let printed: string;
  try {
    printed = await readGuid(port, login, password);
  } catch (error) {
    running.kill('SIGKILL');
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }
  return {
    address: '127.0.0.1',
    port,
    login,
    password,
    guid: printed.replace(/-/g, '').toLowerCase(),
    power: () => (readFileSync(join(directory, 'power'), 'utf8').trim() === '0' ? 'off' : 'on'),
    setPower: (state) => writeFileSync(join(directory, 'power'), state === 'off' ? '0\n' : '1\n'),
    powerCommands: () => readFileSync(join(directory, 'commands'), 'utf8').split('\n').filter(Boolean),
    async stop() {
      if (running.exitCode === null && running.signalCode === null) {
        const gone = new Promise((resolve) => running.once('exit', resolve));
        running.kill('SIGTERM');
        await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, 2000))]);
        if (running.exitCode === null && running.signalCode === null) running.kill('SIGKILL');
      }
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * Writes the simulator's files into `directory`: the chassis script and its power hooks, the power
 * state, the command log and the emulator commands (`sim.emu`).
 * @returns the chassis script's path
 */
function writeSimulatorFiles(directory: string, options: IpmiSimulatorOptions): string {
  const script = join(directory, 'chassis.sh');
  writeFileSync(script, CHASSIS_SCRIPT);
  chmodSync(script, 0o755);
  for (const [name, command] of [
    ['after-power-off', options.chassisCommands?.off],
    ['after-power-on', options.chassisCommands?.on],
  ] as const) {
    writeFileSync(join(directory, name), `#!/bin/sh\n${command ?? 'true'}\n`);
    chmodSync(join(directory, name), 0o755);
  }
  writeFileSync(join(directory, 'power'), options.initialPower === 'off' ? '0\n' : '1\n');
  writeFileSync(join(directory, 'commands'), '');
  writeFileSync(
    join(directory, 'sim.emu'),
    [
      'mc_setbmc 0x20',
      'mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr',
      'sel_enable 0x20 1000 0x0a',
      'mc_enable 0x20',
      '',
    ].join('\n'),
  );
  return script;
}

/**
 * Starts ipmi_sim on a free UDP port with a LAN configuration for `login`/`password` and `guidHex`,
 * trying up to 5 ports (the port can be taken between the look-up and the start); removes `directory`
 * when it fails.
 * @throws Error when ipmi_sim did not start in 5 attempts, or did not answer (waitUntilAnswering)
 */
async function spawnSimulator(
  directory: string,
  lan: { script: string; login: string; password: string; guidHex: string },
): Promise<{ child: ChildProcess; port: number }> {
  let child: ChildProcess | null = null;
  let port = 0;
  for (let attempt = 0; attempt < 5 && child === null; attempt++) {
    port = await freeUdpPort();
    writeFileSync(join(directory, 'lan.conf'), lanConfiguration(port, lan));
    const started = spawn(
      'ipmi_sim',
      [
        '-c',
        join(directory, 'lan.conf'),
        '-f',
        join(directory, 'sim.emu'),
        '-s',
        join(directory, 'state'),
        '-n',
      ],
      { stdio: 'ignore' },
    );
    const exited = new Promise<boolean>((resolve) => started.once('exit', () => resolve(true)));
    try {
      const answering = waitUntilAnswering(port, lan.login, lan.password).then(() => false);
      const ready = await Promise.race([exited, answering]);
      if (ready === false) child = started;
      else started.kill('SIGKILL');
    } catch (error) {
      started.kill('SIGKILL');
      rmSync(directory, { recursive: true, force: true });
      throw error;
    }
  }
  if (child === null) {
    rmSync(directory, { recursive: true, force: true });
    throw new Error('ipmi_sim did not start (5 attempts)');
  }
  return { child, port };
}

/** ipmi_sim's `lan.conf`: one LAN channel on 127.0.0.1:`port`, the chassis script, one admin user. */
function lanConfiguration(
  port: number,
  lan: { script: string; login: string; password: string; guidHex: string },
): string {
  return [
    `name "lgfence${port}"`,
    'set_working_mc 0x20',
    '  startlan 1',
    `    addr 127.0.0.1 ${port}`,
    '    priv_limit admin',
    '    allowed_auths_callback none md2 md5 straight',
    '    allowed_auths_user none md2 md5 straight',
    '    allowed_auths_operator none md2 md5 straight',
    '    allowed_auths_admin none md2 md5 straight',
    `    guid ${lan.guidHex}`,
    '  endlan',
    `  chassis_control "${lan.script} 0x20"`,
    `  user 2 true "${lan.login}" "${lan.password}" admin 10 none md2 md5 straight`,
    '',
  ].join('\n');
}

/**
 * The GUID the simulator prints for `ipmitool mc guid`, as printed.
 * @throws Error when ipmitool fails or prints no GUID
 */
async function readGuid(port: number, login: string, password: string): Promise<string> {
  const { stdout } = await run(
    'ipmitool',
    ['-I', 'lanplus', '-C', '3', '-H', '127.0.0.1', '-p', String(port), '-U', login, '-E', 'mc', 'guid'],
    { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', IPMITOOL_PASSWORD: password }, timeout: 5000 },
  );
  const printed = /GUID\s*:\s*([0-9a-fA-F-]+)/.exec(stdout)?.[1];
  if (!printed) throw new Error(`ipmitool mc guid printed no GUID: ${stdout}`);
  return printed;
}

async function waitUntilAnswering(port: number, login: string, password: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await run(
        'ipmitool',
        [
          '-I',
          'lanplus',
          '-C',
          '3',
          '-H',
          '127.0.0.1',
          '-p',
          String(port),
          '-U',
          login,
          '-E',
          'power',
          'status',
        ],
        { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', IPMITOOL_PASSWORD: password }, timeout: 3000 },
      );
      return;
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(`ipmi_sim on port ${port} does not answer`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
