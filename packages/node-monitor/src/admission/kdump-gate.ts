import { KdumpWait } from '@lifeguard/instance-ha';
import { type AdmittedHost, CONTINUE, type CycleGate } from './admission-run.ts';

/**
 * G10 kdump wait (docs/instance-ha-rules.md#kdump), the last gate: with CHECK_KDUMP, one step of the
 * shared kdump state machine (KdumpWait) per failed host and poll; hosts still waiting are held,
 * kdump-fenced ones admitted without power fencing, timed-out ones admitted normally (their clock is
 * kept for the fence job). A clock or packet from before the host's last report is an earlier
 * failure's, and does not count. Then the admitted hosts in InstanceHA's submission order: new failures,
 * kdump-fenced ones, resumes.
 */
export const kdumpCycleGate: CycleGate = {
  name: 'kdump-wait',
  async run(run) {
    const { config, kdump } = run.dependencies;
    const normal: AdmittedHost[] = [];
    const kdumpFenced: AdmittedHost[] = [];
    const waiting: string[] = [];
    const kdumpWait = new KdumpWait(kdump, config.kdumpTimeoutSeconds);
    for (const service of run.survivors) {
      const incident = run.pending.get(service.host) ?? null;
      // A fresh failure is not forced down: its updated_at is its last report, which ends an earlier
      // failure's clock (docs/instance-ha-rules.md#kdump).
      const lastReportAt = service.forcedDown ? null : service.updatedAtDate;
      const decision = config.checkKdump
        ? (await kdumpWait.step(service.host, run.now, lastReportAt)).decision
        : null;
      if (decision === 'start-wait' || decision === 'waiting') waiting.push(service.host);
      else if (decision === 'kdump-fenced')
        kdumpFenced.push({ service, incident, resume: false, kdumpFenced: true });
      else normal.push({ service, incident, resume: false, kdumpFenced: false });
    }
    if (waiting.length > 0) {
      run.decision.blocked.push({
        gate: 'kdump-wait',
        hosts: waiting,
        reason: `waiting up to KDUMP_TIMEOUT ${config.kdumpTimeoutSeconds}s for fence_kdump`,
      });
    }
    const resumed: AdmittedHost[] = run.resume.map((candidate) => ({
      service: candidate.item,
      incident: candidate.incident,
      resume: true,
      // An incident rebuilt from a marker after Redis lost its memory is not kdump-fenced on the
      // marker's word (docs/safety-rules.md#redis-memory-lost); InstanceHA's marker opens a new one.
      kdumpFenced: candidate.incident ? candidate.incident.kdumpFenced : candidate.item.marker.kdump,
    }));
    run.decision.admitted = [...normal, ...kdumpFenced, ...resumed];
    return CONTINUE;
  },
};
