/**
 * a2a-converse: the framework-free core of the converse extension v1 and the envelope providers. Loads no web
 * framework, no SDK server, no YAML parser, no search index and no database driver (test/package proves it);
 * the doors and the rest have subpaths of their own: a2a-converse/fastify, /runtime, /gateway, /postgres.
 */
export { CONVERSE_EXTENSION_URI, CONVERSE_EXTENSION_DESCRIPTION, EXTENSIONS_HEADER } from './core/uri.js'
export { negotiate, parseExtensionsHeader, formatExtensionsHeader, type Negotiation } from './core/negotiate.js'
export * from './core/envelope.js'
export { envelopeSchema, validateEnvelope } from './core/envelope-schema.js'
export { normalizeEnvelope, type NormalizedEnvelope } from './core/normalize-envelope.js'
export {
  attachedEnvelopeProvider, functionEnvelopeProvider, staticEnvelopeProvider,
  type EnvelopeContext, type EnvelopeProvider
} from './core/envelope-provider.js'
export {
  attachEnvelope, stripEnvelope, stripResult, createEnvelopeDecorator, carriesEnvelopes,
  type EnvelopeDecorator, type EnvelopeLogger, type TurnContext, type DecoratorOptions
} from './core/decorate.js'
export {
  createConverseExtension, normalizeMountPath,
  type ConverseExtension, type ConverseExtensionOptions, type ConverseAgentOptions, type AgentCardInput,
  type CardUrls, type Negotiated, type ResolvedAgent, type ResultContext
} from './core/converse-extension.js'
export {
  validateRoutineDeclarations, TOOL_NAME_PATTERN,
  type RoutineDeclaration, type SlotDeclaration, type RoutineStepDeclaration
} from './core/routine-declarations.js'
export { buildToolDescriptors, routineInputSchema, type ToolDescriptor, type ToolInputSchema } from './core/tool-descriptors.js'
export {
  augmentAgentCard, converseExtensionEntry, converseSkills, ASK_AGENT_SKILL,
  type AgentExtensionEntry, type AgentSkillEntry, type CardLike
} from './core/card.js'
export { ConverseError, RoutineDeclarationError, InvalidOptionError, ProviderTimeoutError } from './core/errors.js'
export type * from './core/wire.js'
