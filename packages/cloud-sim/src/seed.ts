import type { CloudModel } from './model/cloud-model.ts';

/**
 * The initial cloud: flavors `m1.tiny` (id 1) and `m1.small` (id 2), the image `cirros`, compute hosts
 * (`compute1`..`computeN` for a count) and servers spread round-robin over them.
 */
export function seedCloud(model: CloudModel, hosts: number | ReadonlyArray<string>, servers: number): void {
  model.addFlavor({ id: '1', name: 'm1.tiny', ram: 512, vcpus: 1, disk: 1 });
  model.addFlavor({ id: '2', name: 'm1.small', ram: 2048, vcpus: 1, disk: 20 });
  model.addImage({ name: 'cirros' });
  const names =
    typeof hosts === 'number' ? Array.from({ length: hosts }, (_, index) => `compute${index + 1}`) : hosts;
  for (const name of names) model.addHost(name);
  for (let index = 0; index < servers; index++) {
    model.addServer({ host: names[index % names.length]!, name: `server-${index + 1}` });
  }
}
