/**
 * One domain event as `virsh event --all --loop --timestamp` prints it, in the words Masakari's
 * instance monitor sends (masakari-monitors' event filter table): `event` is the libvirt event id
 * (`LIFECYCLE`, `REBOOT`, `WATCHDOG`, `IO_ERROR`, `IO_ERROR_REASON`, `CONTROL_ERROR`) and
 * `virDomainEvent` its detail (`STOPPED_FAILED`, `IO_ERROR_REPORT`, `UNKNOWN`, ...).
 */
export interface DomainEvent {
  /** The libvirt domain name (Nova's `instance-0000002a`). */
  readonly domain: string;
  readonly event: string;
  readonly virDomainEvent: string;
  /** virsh's `--timestamp` prefix, or null without it. */
  readonly at: Date | null;
}

/**
 * virsh's lifecycle words (`<event> <detail>`, tools/virsh-domain-event.c) for the lifecycle events in
 * Masakari's filter table, and the detail name Masakari sends for each.
 */
export const LIFECYCLE_DETAILS: Readonly<Record<string, string>> = {
  'Suspended I/O Error': 'SUSPENDED_IOERROR',
  'Suspended Watchdog': 'SUSPENDED_WATCHDOG',
  'Suspended API error': 'SUSPENDED_API_ERROR',
  'Stopped Shutdown': 'STOPPED_SHUTDOWN',
  'Stopped Destroyed': 'STOPPED_DESTROYED',
  'Stopped Failed': 'STOPPED_FAILED',
  'Shutdown Finished': 'SHUTDOWN_FINISHED',
};

/** virsh's watchdog actions in Masakari's filter table (`inject-nmi` is not in it). */
const WATCHDOG_ACTIONS = ['none', 'pause', 'reset', 'poweroff', 'shutdown', 'debug'];
/** virsh's I/O error actions. */
const IO_ERROR_ACTIONS = ['none', 'pause', 'report'];

const TIMESTAMP = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d\.\d{3})\+0000: /;
const HEADER = /^event '([a-z-]+)' for domain '(.*?)'(?:: (.*))?$/;

function detailOf(kind: string, rest: string | undefined): { event: string; virDomainEvent: string } | null {
  switch (kind) {
    case 'lifecycle': {
      const detail =
        rest !== undefined && Object.hasOwn(LIFECYCLE_DETAILS, rest) ? LIFECYCLE_DETAILS[rest] : undefined;
      return detail === undefined ? null : { event: 'LIFECYCLE', virDomainEvent: detail };
    }
    case 'reboot':
      return rest === undefined ? { event: 'REBOOT', virDomainEvent: 'UNKNOWN' } : null;
    case 'control-error':
      return rest === undefined ? { event: 'CONTROL_ERROR', virDomainEvent: 'UNKNOWN' } : null;
    case 'watchdog':
      return rest !== undefined && WATCHDOG_ACTIONS.includes(rest)
        ? { event: 'WATCHDOG', virDomainEvent: `WATCHDOG_${rest.toUpperCase()}` }
        : null;
    case 'io-error': {
      // `<source path> (<device alias>) <action>`, with ` due to <reason>` for the io-error-reason event.
      const match = rest?.match(/^.* \(.*\) ([a-z]+)( due to .*)?$/);
      if (!match || !IO_ERROR_ACTIONS.includes(match[1]!)) return null;
      return match[2] !== undefined
        ? { event: 'IO_ERROR_REASON', virDomainEvent: 'UNKNOWN' }
        : { event: 'IO_ERROR', virDomainEvent: `IO_ERROR_${match[1]!.toUpperCase()}` };
    }
    default:
      return null;
  }
}

/**
 * Parses one line of `virsh event --all --loop [--timestamp]` (libvirt 9's wording). Returns null for
 * every line that is not a domain event in Masakari's instance monitor filter table: other events
 * (`Started Booted`, `Suspended Paused`, `rtc-change`, `graphics`, ...), continuation lines, and
 * virsh's own messages.
 */
export function parseVirshEventLine(line: string): DomainEvent | null {
  let text = line.replace(/\r?\n$/, '');
  let at: Date | null = null;
  const stamp = TIMESTAMP.exec(text);
  if (stamp) {
    at = new Date(`${stamp[1]}T${stamp[2]}Z`);
    text = text.slice(stamp[0].length);
  }
  const header = HEADER.exec(text);
  if (!header) return null;
  const detail = detailOf(header[1]!, header[3]);
  return detail === null ? null : { domain: header[2]!, ...detail, at };
}
