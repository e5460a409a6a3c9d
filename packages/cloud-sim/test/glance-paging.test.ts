import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createOpenStackClients } from '@lifeguard/openstack';
import { type CloudSim, startCloudSim } from '../src/index.ts';

let sim: CloudSim;
before(async () => {
  sim = await startCloudSim({ hosts: 1, redfishPort: false });
  for (let index = 0; index < 30; index++)
    sim.model.addImage({ name: `image-${index}`, tags: index % 3 === 0 ? ['evacuable'] : [] });
});
after(() => sim.close());

describe('cloud-sim Glance paging', () => {
  it('answers 25 images per page by default with a next link, newest first', async () => {
    const response = await fetch(`${sim.urls.image}/v2/images`);
    const body = (await response.json()) as { images: Array<{ name: string }>; next?: string; first: string };
    assert.equal(body.images.length, 25);
    assert.equal(body.images[0]?.name, 'image-29');
    assert.match(body.next ?? '', /^\/v2\/images\?marker=[0-9a-f-]{36}$/);
    assert.equal(body.first, '/v2/images');
  });

  it('lets the client read every page and filter by tag', async () => {
    const { image } = createOpenStackClients({
      env: {
        OS_AUTH_TYPE: 'none',
        OS_ENDPOINT: sim.urls.compute,
        OS_IMAGE_ENDPOINT_OVERRIDE: sim.urls.image,
      },
      searchDirectories: [],
    });
    assert.equal((await image.listImages()).length, 31);
    const tagged = await image.listImages({ tag: 'evacuable' });
    assert.equal(tagged.length, 10);
    assert.ok(tagged.every((each) => each.tags.includes('evacuable')));
  });

  it('refuses a negative limit and an unknown marker with Glance error pages', async () => {
    const negative = await fetch(`${sim.urls.image}/v2/images?limit=-1`);
    assert.equal(negative.status, 400);
    assert.match(await negative.text(), /<h1>400 Bad Request<\/h1>\n {2}limit param must be positive/);
    const marker = await fetch(`${sim.urls.image}/v2/images?marker=00000000-0000-4000-8000-000000000000`);
    assert.equal(marker.status, 400);
  });
});
