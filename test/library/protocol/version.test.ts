import t from 'tap'
import {
  A2A_VERSION_HEADER, checkVersion, DEFAULT_A2A_VERSION, requestedVersion, SUPPORTED_A2A_VERSIONS
} from '../../../packages/a2a-converse/src/protocol/version.js'

t.test('constants', async (t) => {
  t.equal(A2A_VERSION_HEADER, 'A2A-Version')
  t.strictSame(SUPPORTED_A2A_VERSIONS, ['1.0'])
  t.equal(DEFAULT_A2A_VERSION, '0.3')
})

t.test('the requested version: header, then query, then 0.3', async (t) => {
  t.equal(requestedVersion('1.0', undefined), '1.0')
  t.equal(requestedVersion(' 1.0 ', '9.9'), '1.0', 'the header wins and is trimmed')
  t.equal(requestedVersion(undefined, '1.0'), '1.0')
  t.equal(requestedVersion('', '1.0'), '1.0', 'an empty header counts as missing')
  t.equal(requestedVersion('   ', undefined), '0.3')
  t.equal(requestedVersion(undefined, undefined), '0.3')
  t.equal(requestedVersion(undefined, ''), '0.3')
  t.equal(requestedVersion(undefined, ['', '1.0']), '1.0', 'a repeated query parameter: the first non-empty one')
  t.equal(requestedVersion(['', '1.0.2'], undefined), '1.0.2')
  t.equal(requestedVersion([], undefined), '0.3')
  t.equal(requestedVersion(undefined, 10), '0.3', 'non-string query values are ignored')
})

t.test('1.0 and 1.0.x are served, everything else is -32009', async (t) => {
  for (const ok of ['1.0', '1.0.0', '1.0.3', '1.0.123']) t.equal(checkVersion(ok), undefined, ok)
  for (const bad of ['0.3', '1', '1.1', '2.0', '1.0.', '1.0.x', '01.0', '1.00', 'v1.0', '1.0-rc1', '']) {
    const error = checkVersion(bad)
    t.equal(error?.code, -32009, bad)
    t.strictSame(error?.data, [{
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: 'VERSION_NOT_SUPPORTED',
      domain: 'a2a-protocol.org',
      metadata: { requestedVersion: bad, supportedVersions: '1.0' }
    }], bad)
  }
})
