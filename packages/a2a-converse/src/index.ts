/**
 * a2a-converse: the converse extension v1 for A2A 1.0, framework-free — negotiation of `A2A-Extensions`, the envelope
 * (its type, JSON Schema and providers), decorating and stripping outgoing A2A objects, the card's extension entry and
 * tool descriptors. Loads no web framework, no SDK server, no YAML parser, no search index and no database driver
 * (test/suites/package/entry-points.test.ts). The short list: every enum, wire type and part of the core is in
 * a2a-converse/core; the doors and the rest have subpaths of their own (docs/library.md lists each one's names).
 */
export { CONVERSE_EXTENSION_URI, CONVERSE_EXTENSION_DESCRIPTION, EXTENSIONS_HEADER } from './core/uri.js'
export { negotiate, parseExtensionsHeader, formatExtensionsHeader, type Negotiation } from './core/negotiate.js'
export type { ConverseEnvelope, EnvelopeDraft } from './core/envelope.js'
export { envelopeSchema, validateEnvelope } from './core/envelope-schema.js'
export {
  attachedEnvelopeProvider, functionEnvelopeProvider, staticEnvelopeProvider, type EnvelopeContext, type EnvelopeProvider
} from './core/envelope-provider.js'
export { attachEnvelope, stripEnvelope, createEnvelopeDecorator, type EnvelopeDecorator, type DecoratorOptions } from './core/decorate.js'
export {
  createConverseExtension, type ConverseExtension, type ConverseExtensionOptions, type ConverseAgentOptions, type AgentCardInput
} from './core/converse-extension.js'
export { validateRoutineDeclarations, type RoutineDeclaration } from './core/routine-declarations.js'
export { buildToolDescriptors, type ToolDescriptor } from './core/tool-descriptors.js'
export { augmentAgentCard, converseExtensionEntry } from './core/card.js'
export { ConverseError, InvalidOptionError, ERROR_CODES, isConverseError, type ErrorCode } from './core/errors.js'
