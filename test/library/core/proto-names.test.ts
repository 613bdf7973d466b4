/**
 * ProtoJSON proto names (core/proto-names.ts): the table of A2A 1.0 request messages matches the proto (through the
 * official SDK's generated types, which list every field of each message under its JSON name), every field is
 * accepted under its proto name, Struct contents are never renamed, and a field under both names is reported.
 */
import t from 'tap'
import * as sdk from '@a2a-js/sdk'
import { METHOD_REQUEST_MESSAGES, REQUEST_MESSAGES, protoName, withJsonNames } from '../../../packages/a2a-converse/src/core/proto-names.js'
import { A2A_METHODS } from '../../../packages/a2a-converse/src/protocol/methods.js'

/** The SDK's generated message types by proto name (`fromJSON({})` has one key per field, a oneof's under its group). */
const generated = sdk as unknown as Record<string, { fromJSON (value: unknown): Record<string, unknown> }>
const ONEOFS: Record<string, Record<string, string[]>> = { Part: { content: ['text', 'raw', 'url', 'data'] } }

t.test('the table has every field of every request message, as the SDK generated them from a2a.proto', async (t) => {
  for (const [type, fields] of Object.entries(REQUEST_MESSAGES)) {
    const expected = Object.keys(generated[type].fromJSON({})).flatMap((key) => ONEOFS[type]?.[key] ?? [key])
    t.same(Object.keys(fields).sort(), expected.sort(), type)
    for (const [field, nested] of Object.entries(fields)) {
      if (nested !== null) t.ok(REQUEST_MESSAGES[nested], `${type}.${field}: ${nested} is in the table`)
    }
  }
  t.same(Object.keys(METHOD_REQUEST_MESSAGES).sort(), [...A2A_METHODS].sort(), 'one request message per method')
})

t.test('every field under its proto name is the SDK\'s field of the same JSON name', async (t) => {
  for (const [type, fields] of Object.entries(REQUEST_MESSAGES)) {
    for (const [field, nested] of Object.entries(fields)) {
      if (nested !== null || protoName(field) === field || type === 'Part') continue
      const sample = /Modes|Ids|extensions/.test(field) ? ['x'] : /history|page_?[Ss]ize/i.test(field) ? 3 : /return|include/.test(field) ? true : 'x'
      const value = field === 'statusTimestampAfter' ? '2026-01-01T00:00:00Z' : sample
      const viaProto = generated[type].fromJSON({ [protoName(field)]: value })
      const viaJson = generated[type].fromJSON({ [field]: value })
      t.same(viaProto, viaJson, `${type}: ${protoName(field)} is ${field}`)
      t.same(withJsonNames(methodOf(type), wrap(type, { [protoName(field)]: value })).value, wrap(type, { [field]: value }), `${type}.${protoName(field)} renamed`)
    }
  }
})

/** A method whose request nests `type`, and the params that put `fields` there. */
function methodOf (type: string): string {
  const direct = Object.entries(METHOD_REQUEST_MESSAGES).find(([, request]) => request === type)
  return direct === undefined ? 'SendMessage' : direct[0]
}
function wrap (type: string, fields: Record<string, unknown>): unknown {
  if (Object.values(METHOD_REQUEST_MESSAGES).includes(type)) return fields
  if (type === 'Message') return { message: fields }
  if (type === 'SendMessageConfiguration') return { configuration: fields }
  return { configuration: { taskPushNotificationConfig: { authentication: fields } } }
}

t.test('a whole SendMessage in proto names becomes the JSON names; Structs and unknown fields stay as sent', async (t) => {
  const metadata = { task_id: 'mine', deep: { message_id: 'also mine' } }
  const params = {
    message: {
      message_id: 'm1',
      context_id: 'c1',
      task_id: 't1',
      role: 'ROLE_USER',
      parts: [{ text: 'hi', media_type: 'text/plain', metadata }, { data: { context_id: 'data' } }, 'not a part'],
      reference_task_ids: ['t0'],
      metadata,
      some_future_field: 1
    },
    configuration: {
      accepted_output_modes: ['text/plain'],
      history_length: 2,
      return_immediately: true,
      task_push_notification_config: { task_id: 't1', url: 'https://example.com/hook', authentication: { scheme: 'Bearer' } }
    },
    metadata
  }
  const { value, conflicts } = withJsonNames('SendStreamingMessage', params)
  t.same(conflicts, [])
  t.strictSame(value, {
    message: {
      messageId: 'm1',
      contextId: 'c1',
      taskId: 't1',
      role: 'ROLE_USER',
      parts: [{ text: 'hi', mediaType: 'text/plain', metadata }, { data: { context_id: 'data' } }, 'not a part'],
      referenceTaskIds: ['t0'],
      metadata,
      some_future_field: 1
    },
    configuration: {
      acceptedOutputModes: ['text/plain'],
      historyLength: 2,
      returnImmediately: true,
      taskPushNotificationConfig: { taskId: 't1', url: 'https://example.com/hook', authentication: { scheme: 'Bearer' } }
    },
    metadata
  })
  t.equal(params.message.message_id, 'm1', 'the request itself is not changed')
})

t.test('JSON names cost no copy; what is not an object is left to validation', async (t) => {
  const params = { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } }
  t.equal(withJsonNames('SendMessage', params).value, params, 'the same object')
  for (const value of [undefined, null, 'text', [1], 3]) t.equal(withJsonNames('GetTask', value).value, value)
  t.same(withJsonNames('SendMessage', { message: 'x', configuration: [] }).value, { message: 'x', configuration: [] })
  const odd = { task_id: 1 }
  t.equal(withJsonNames('NoSuchMethod', odd).value, odd, 'an unknown method: as sent')
})

t.test('a field under both names is a conflict, reported at its JSON name, wherever it is', async (t) => {
  const { value, conflicts } = withJsonNames('SendMessage', {
    message: { messageId: 'a', message_id: 'b', role: 'ROLE_USER', parts: [{ text: 'x', mediaType: 'a', media_type: 'b' }] }
  })
  t.same(conflicts, [
    { field: 'message.messageId', protoName: 'message_id' },
    { field: 'message.parts[0].mediaType', protoName: 'media_type' }
  ])
  t.match(value, { message: { messageId: 'a', message_id: 'b' } }, 'left as sent')
  t.same(withJsonNames('ListTaskPushNotificationConfigs', { taskId: 't', task_id: 't' }).conflicts, [{ field: 'taskId', protoName: 'task_id' }], 'the same value twice too')
})
