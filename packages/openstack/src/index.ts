export type { ComputeApi, MigrationFilter, NovaCallInfo } from './compute/compute-api.ts';
export {
  Aggregate,
  ComputeService,
  ComputeServiceUpdate,
  EmbeddedFlavor,
  Flavor,
  Hypervisor,
  Migration,
  Server,
  ServerExternalEvent,
  ServerExternalEventResult,
} from './compute/resources.ts';
export type { ImageApi } from './image/image-api.ts';
export { Image } from './image/resources.ts';
