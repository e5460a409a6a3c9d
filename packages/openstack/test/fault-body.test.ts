import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { versionDocumentUrl } from '../src/compute/microversion.ts';
import { chooseMicroversion, faultMessage, MicroversionNotSupportedError } from '../src/index.ts';

describe('fault bodies', () => {
  it("reads Nova's fault body", () => {
    assert.equal(
      faultMessage(
        400,
        '{"badRequest": {"code": 400, "message": "Compute service of compute2 is still in use."}}',
      ),
      'Compute service of compute2 is still in use.',
    );
  });
  it("reads Keystone's error body", () => {
    assert.equal(
      faultMessage(
        401,
        '{"error": {"code": 401, "message": "The request you have made requires authentication.", "title": "Unauthorized"}}',
      ),
      'The request you have made requires authentication.',
    );
  });
  it("reads Glance's HTML page", () => {
    const page =
      '<html>\n <head>\n  <title>404 Not Found</title>\n </head>\n <body>\n  <h1>404 Not Found</h1>\n  No image found with ID nonexist<br /><br />\n\n\n\n </body>\n</html>';
    assert.equal(faultMessage(404, page), '404 Not Found: No image found with ID nonexist');
  });
  it('keeps plain text and names an empty body by its status', () => {
    assert.equal(faultMessage(502, 'Bad   Gateway\n'), 'Bad Gateway');
    assert.equal(faultMessage(503, ''), 'HTTP 503');
  });
  it('clips very long bodies to 500 characters', () => {
    assert.equal(faultMessage(500, 'x'.repeat(2000)).length, 500);
  });
});

describe('microversion choice', () => {
  it('prefers 2.73 when Nova offers it', () => {
    assert.equal(chooseMicroversion('n', '2.1', '2.93'), '2.73');
    assert.equal(chooseMicroversion('n', '2.1', '2.73'), '2.73');
  });
  it('takes the newest version from 2.53 up when 2.73 is not offered', () => {
    assert.equal(chooseMicroversion('n', '2.1', '2.53'), '2.53');
    assert.equal(chooseMicroversion('n', '2.1', '2.65'), '2.65');
  });
  it('refuses a Nova older than 2.53', () => {
    assert.throws(() => chooseMicroversion('n', '2.1', '2.52'), MicroversionNotSupportedError);
  });
  it('reads the version document from the endpoint without a project id', () => {
    assert.equal(versionDocumentUrl('http://nova:8774/v2.1/3f2a9c'), 'http://nova:8774/v2.1');
    assert.equal(versionDocumentUrl('https://cloud/compute/v2.1/'), 'https://cloud/compute/v2.1');
  });
});
