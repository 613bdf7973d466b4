import t from 'tap'
import { ASK_AGENT_SKILL, augmentAgentCard, cardAsServed, converseExtensionEntry, converseSkills, requestedCardVersion, v03CardFields, withV03Fields, withV03Interfaces } from '../../../packages/a2a-converse/src/core/card.js'
import { ConverseError, InvalidOptionError, RoutineDeclarationError } from '../../../packages/a2a-converse/src/core/errors.js'
import {
  TOOL_NAME_PATTERN, validateRoutineDeclarations, type RoutineDeclaration
} from '../../../packages/a2a-converse/src/core/routine-declarations.js'
import { buildToolDescriptors, routineInputSchema } from '../../../packages/a2a-converse/src/core/tool-descriptors.js'
import { CONVERSE_EXTENSION_DESCRIPTION, CONVERSE_EXTENSION_URI as URI } from '../../../packages/a2a-converse/src/core/uri.js'

const MCP = 'https://mcp.radioso.ai/mcp/a/ag_7Qb3nT1xK9wZs2Pv0Lm4Rd'

/** The routine behind the spec's example card. */
const BOOK_TABLE: RoutineDeclaration = {
  name: 'Book a table',
  toolName: 'book_table',
  description: 'Book a table for a date and party size.',
  exposed: true,
  slots: [
    { key: 'date', type: 'string', required: true, description: 'The date' },
    { key: 'partySize', type: 'integer', required: true, description: 'How many people' },
    { key: 'note', type: 'string' }
  ]
}
const HIDDEN: RoutineDeclaration = {
  name: 'Internal refund', toolName: 'refund', description: 'Refund an order.', exposed: false, slots: []
}
const UNNAMED: RoutineDeclaration = { name: 'Chit-chat', description: 'Small talk.', slots: [] }
const ORDER: RoutineDeclaration = {
  name: 'Order status',
  toolName: 'order-status',
  description: 'Where is my order?',
  exposed: true,
  enabled: false,
  steps: [{ id: 'ask', prompt: 'Which order?' }, { id: 'confirm' }],
  slots: [
    { key: 'orderId', type: 'string', required: true, description: 'The order number', step: 'ask' },
    { key: 'express', type: 'boolean', required: false, description: 'Express?', step: 'confirm' },
    { key: 'weight', type: 'number' }
  ],
  approval: { prompt: 'Go?' },
  triggers: ['where is my order']
}

t.test('the extension entry has the spec shape', async (t) => {
  const tools = buildToolDescriptors([BOOK_TABLE])
  const entry = converseExtensionEntry(MCP, tools)
  t.same(entry, {
    uri: URI,
    description: CONVERSE_EXTENSION_DESCRIPTION,
    required: false,
    params: {
      mcp: { url: MCP, serverCardUrl: `${MCP}/server-card` },
      tools: [{
        toolName: 'book_table',
        description: 'Book a table for a date and party size.',
        inputSchema: {
          type: 'object',
          properties: {
            date: { type: 'string', description: 'The date' },
            partySize: { type: 'integer', description: 'How many people' },
            note: { type: 'string' }
          },
          required: ['date', 'partySize'],
          additionalProperties: false
        }
      }]
    }
  })
  t.equal((entry.params as any).tools, tools, 'the very same descriptors')
  t.same(Object.keys(entry), ['uri', 'description', 'required', 'params'])
})

t.test('tools: one per exposed routine, in order; [] when none', async (t) => {
  t.same(buildToolDescriptors([]), [])
  t.same(buildToolDescriptors([HIDDEN, UNNAMED]), [], 'nothing exposed: empty')
  const tools = buildToolDescriptors([HIDDEN, ORDER, UNNAMED, BOOK_TABLE])
  t.same(tools.map((tool) => tool.toolName), ['order-status', 'book_table'])
  t.same(tools[0], {
    toolName: 'order-status',
    description: 'Where is my order?',
    inputSchema: {
      type: 'object',
      properties: {
        orderId: { type: 'string', description: 'The order number' },
        express: { type: 'boolean', description: 'Express?' },
        weight: { type: 'number' }
      },
      required: ['orderId'],
      additionalProperties: false
    }
  })
  t.ok(Object.isFrozen(tools) && Object.isFrozen(tools[0]) && Object.isFrozen(tools[0].inputSchema.properties.orderId),
    'deep-frozen: shared as is')
  t.same(routineInputSchema({ ...UNNAMED }), { type: 'object', properties: {}, required: [], additionalProperties: false })
})

t.test('skills: ask_agent plus one per exposed routine with id = toolName', async (t) => {
  const skills = converseSkills([HIDDEN, BOOK_TABLE, UNNAMED, ORDER])
  t.same(skills.map((skill) => skill.id), ['ask_agent', 'book_table', 'order-status'])
  t.equal(skills[0], ASK_AGENT_SKILL)
  t.same(skills[1], { id: 'book_table', name: 'Book a table', description: 'Book a table for a date and party size.', tags: ['routine'] })
  t.same(converseSkills([]), [ASK_AGENT_SKILL], 'plain conversation always works')
  t.ok(Object.isFrozen(ASK_AGENT_SKILL))
  const tools = buildToolDescriptors([HIDDEN, BOOK_TABLE, UNNAMED, ORDER])
  t.same(skills.slice(1).map((skill) => skill.id), tools.map((tool) => tool.toolName), 'skill ids match tool names')
})

t.test('augmentAgentCard', async (t) => {
  const tools = buildToolDescriptors([BOOK_TABLE])
  const bare = augmentAgentCard({ name: 'A' }, { mcpUrl: MCP, tools, routines: [BOOK_TABLE] })
  t.same(bare.capabilities, { extensions: [converseExtensionEntry(MCP, tools)] })
  t.same(bare.skills?.map((skill) => skill.id), ['ask_agent', 'book_table'])

  const other = { uri: 'https://example.com/ext/v1', required: true }
  const card = {
    name: 'B',
    capabilities: { streaming: true, extensions: [{ uri: URI, description: 'stale' }, other] },
    skills: [
      { id: 'book_table', name: 'old', description: 'collides', tags: [] },
      { id: 'faq', name: 'FAQ', description: 'Answers', tags: ['faq'] }
    ]
  }
  const before = structuredClone(card)
  const augmented = augmentAgentCard(card, { mcpUrl: MCP, tools, routines: [BOOK_TABLE] })
  t.same(augmented.capabilities?.extensions, [other, converseExtensionEntry(MCP, tools)], 'previous converse entry replaced, others kept')
  t.equal(augmented.capabilities?.extensions?.filter((entry) => entry.uri === URI).length, 1, 'URI listed once')
  t.equal(augmented.capabilities?.streaming, true)
  t.same(augmented.skills?.map((skill) => skill.id), ['ask_agent', 'book_table', 'faq'], 'card skills follow, collisions dropped')
  t.equal(augmented.skills?.[1].name, 'Book a table')
  t.same(card, before, 'input card not mutated')
})

t.test('valid declarations pass', async (t) => {
  t.doesNotThrow(() => validateRoutineDeclarations([]))
  t.doesNotThrow(() => validateRoutineDeclarations([BOOK_TABLE, HIDDEN, UNNAMED, ORDER]))
  for (const name of ['a', 'A-z_0', 'x'.repeat(64)]) t.ok(TOOL_NAME_PATTERN.test(name), name)
  for (const name of ['', 'x'.repeat(65), 'a b', 'a.b', 'é', 'a/b']) t.notOk(TOOL_NAME_PATTERN.test(name), name)
})

t.test('declaration errors name the routine and the field', async (t) => {
  const cases: Array<[string, unknown, string, string]> = [
    // [what, declarations, routine, field]
    ['not an array', { name: 'x' }, '(all)', 'routines'],
    ['a routine that is not an object', [null], '#0', 'routine'],
    ['a string routine', [BOOK_TABLE, 'x'], '#1', 'routine'],
    ['no name', [{ description: 'd', slots: [] }], '#0', 'name'],
    ['blank name', [{ name: '  ', description: 'd', slots: [] }], '#0', 'name'],
    ['duplicate name', [BOOK_TABLE, { ...HIDDEN, name: 'Book a table' }], 'Book a table', 'name'],
    ['no description', [{ name: 'r', slots: [] }], 'r', 'description'],
    ['blank description', [{ name: 'r', description: ' ', slots: [] }], 'r', 'description'],
    ['exposed not boolean', [{ ...HIDDEN, exposed: 'yes' }], 'Internal refund', 'exposed'],
    ['enabled not boolean', [{ ...HIDDEN, enabled: 1 }], 'Internal refund', 'enabled'],
    ['duplicate toolName', [BOOK_TABLE, { ...HIDDEN, toolName: 'book_table' }], 'Internal refund', 'toolName'],
    ['toolName with a space', [{ ...BOOK_TABLE, toolName: 'book table' }], 'Book a table', 'toolName'],
    ['toolName too long', [{ ...BOOK_TABLE, toolName: 'x'.repeat(65) }], 'Book a table', 'toolName'],
    ['empty toolName', [{ ...BOOK_TABLE, toolName: '' }], 'Book a table', 'toolName'],
    ['toolName not a string', [{ ...BOOK_TABLE, toolName: 7 }], 'Book a table', 'toolName'],
    ['exposed without toolName', [{ ...UNNAMED, exposed: true }], 'Chit-chat', 'toolName'],
    ['steps not an array', [{ ...ORDER, steps: {} }], 'Order status', 'steps'],
    ['a step without id', [{ ...ORDER, steps: [{}] }], 'Order status', 'steps[].id'],
    ['a null step', [{ ...ORDER, steps: [null] }], 'Order status', 'steps[].id'],
    ['an empty step id', [{ ...ORDER, steps: [{ id: '' }] }], 'Order status', 'steps[].id'],
    ['duplicate step', [{ ...ORDER, steps: [{ id: 'ask' }, { id: 'ask' }] }], 'Order status', 'steps.ask'],
    ['approval null', [{ ...ORDER, approval: null }], 'Order status', 'approval'],
    ['approval a string', [{ ...ORDER, approval: 'yes' }], 'Order status', 'approval'],
    ['triggers not an array', [{ ...ORDER, triggers: 'hi' }], 'Order status', 'triggers'],
    ['a blank trigger', [{ ...ORDER, triggers: ['ok', ' '] }], 'Order status', 'triggers'],
    ['a non-string trigger', [{ ...ORDER, triggers: [1] }], 'Order status', 'triggers'],
    ['slots missing', [{ ...UNNAMED, slots: undefined }], 'Chit-chat', 'slots'],
    ['a null slot', [{ ...UNNAMED, slots: [null] }], 'Chit-chat', 'slots[].key'],
    ['a slot without key', [{ ...UNNAMED, slots: [{ type: 'string' }] }], 'Chit-chat', 'slots[].key'],
    ['a slot key with a dash', [{ ...UNNAMED, slots: [{ key: 'party-size', type: 'string' }] }], 'Chit-chat', 'slots[].key'],
    ['duplicate slot', [{ ...UNNAMED, slots: [{ key: 'a', type: 'string' }, { key: 'a', type: 'number' }] }], 'Chit-chat', 'slots.a'],
    ['unknown slot type', [{ ...UNNAMED, slots: [{ key: 'when', type: 'date' }] }], 'Chit-chat', 'slots.when.type'],
    ['missing slot type', [{ ...UNNAMED, slots: [{ key: 'when' }] }], 'Chit-chat', 'slots.when.type'],
    ['required not boolean', [{ ...UNNAMED, slots: [{ key: 'a', type: 'string', required: 'yes', description: 'd' }] }], 'Chit-chat', 'slots.a.required'],
    ['description not a string', [{ ...UNNAMED, slots: [{ key: 'a', type: 'string', description: 5 }] }], 'Chit-chat', 'slots.a.description'],
    ['required slot without description', [{ ...UNNAMED, slots: [{ key: 'a', type: 'string', required: true }] }], 'Chit-chat', 'slots.a.description'],
    ['required slot with a blank description', [{ ...UNNAMED, slots: [{ key: 'a', type: 'string', required: true, description: ' ' }] }], 'Chit-chat', 'slots.a.description'],
    ['slot naming an undeclared step', [{ ...ORDER, slots: [{ key: 'a', type: 'string', step: 'pay' }] }], 'Order status', 'slots.a.step'],
    ['slot naming a step when none is declared', [{ ...UNNAMED, slots: [{ key: 'a', type: 'string', step: 'pay' }] }], 'Chit-chat', 'slots.a.step']
  ]
  for (const [what, declarations, routine, field] of cases) {
    let caught: unknown
    try { validateRoutineDeclarations(declarations) } catch (error) { caught = error }
    t.ok(caught instanceof RoutineDeclarationError, `${what}: a RoutineDeclarationError`)
    const error = caught as RoutineDeclarationError
    t.equal(error.routine, routine, `${what}: names the routine`)
    t.equal(error.field, field, `${what}: names the field`)
    t.match(error.message, `routine "${routine}": ${field} `, `${what}: message names both`)
    t.equal(error.code, 'A2A_CONVERSE_ROUTINE_DECLARATION')
    t.equal(error.name, 'RoutineDeclarationError')
    t.ok(error instanceof ConverseError)
  }
})

t.test('InvalidOptionError', async (t) => {
  const error = new InvalidOptionError('providerTimeoutMs', 'must be an integer')
  t.equal(error.option, 'providerTimeoutMs')
  t.equal(error.message, 'option "providerTimeoutMs" must be an integer')
  t.equal(error.code, 'A2A_CONVERSE_INVALID_OPTION')
  t.equal(error.name, 'InvalidOptionError')
})

t.test('the 0.3 card fields, from supportedInterfaces', async (t) => {
  const rest = { url: 'https://g.example/a2a/x/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' }
  const rpc = { url: 'https://g.example/a2a/x', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }
  t.strictSame(v03CardFields({ supportedInterfaces: [rest, rpc] }, ['HTTP+JSON', 'JSONRPC']), {
    protocolVersion: '0.3.0',
    url: rpc.url,
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [{ url: rest.url, transport: 'HTTP+JSON' }, { url: rpc.url, transport: 'JSONRPC' }]
  }, 'JSON-RPC preferred wherever it is listed')
  t.strictSame(v03CardFields({ supportedInterfaces: [rest] }, ['HTTP+JSON']), {
    protocolVersion: '0.3.0', url: rest.url, preferredTransport: 'HTTP+JSON', additionalInterfaces: [{ url: rest.url, transport: 'HTTP+JSON' }]
  }, 'no JSON-RPC: the first served binding')
  t.strictSame(v03CardFields({ supportedInterfaces: [rest, null, 'x', { protocolBinding: 'JSONRPC' }] }), { protocolVersion: '0.3.0' }, 'nothing served in 0.3: no url')
  t.strictSame(v03CardFields({}), { protocolVersion: '0.3.0' })
  const card = { name: 'X', supportedInterfaces: [rpc], capabilities: { extendedAgentCard: false } }
  t.strictSame(withV03Fields(card), { ...card, protocolVersion: '0.3.0', url: rpc.url, preferredTransport: 'JSONRPC', additionalInterfaces: [{ url: rpc.url, transport: 'JSONRPC' }] })
  t.match(withV03Fields({ supportedInterfaces: [rpc, rest] }).additionalInterfaces, [{ transport: 'JSONRPC' }, { url: rest.url, transport: 'HTTP+JSON' }], 'both bindings are served in 0.3')
})

t.test('the card as served: 1.0 with the 0.3 interfaces listed the 1.0 way, or 0.3 for a 0.3 reader', async (t) => {
  const rpc = { url: 'https://g.example/a2a/x', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }
  const grpc = { url: 'g.example:50051', protocolBinding: 'GRPC', tenant: 'x', protocolVersion: '1.0' }
  const card = { name: 'X', supportedInterfaces: [rpc, grpc] }
  t.strictSame(withV03Interfaces(card).supportedInterfaces, [rpc, grpc, { url: rpc.url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' }],
    'gRPC is not served in 0.3 terms; the 1.0 entries first')
  t.equal(withV03Interfaces({ name: 'Y' }).supportedInterfaces, undefined, 'no interfaces: the card as it is')
  t.equal(cardAsServed(card, false, '0.3'), card, 'an agent that serves 1.0 only: its card, whatever was asked')
  t.strictSame(cardAsServed(card, true, '1.0'), withV03Interfaces(card))
  t.strictSame(cardAsServed(card, true, '0.3'), withV03Fields(card))
  for (const [header, version] of [[undefined, '1.0'], ['1.0', '1.0'], ['0.3', '0.3'], [' 0.3.1 ', '0.3'], [['0.3', '1.0'], '0.3'], ['0.30', '1.0'], ['2.0', '1.0']] as const) {
    t.equal(requestedCardVersion(header as string | string[] | undefined), version, `A2A-Version ${JSON.stringify(header)}`)
  }
})
