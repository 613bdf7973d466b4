import t from 'tap'
import { MemoryConversationStore } from '../../../packages/a2a-converse/src/stores/memory-conversation-store.js'
import { conversationStoreContract } from './conversation-store-contract.js'

// The shared ConversationStore contract, on the in-memory store (its own file has the memory-specific cases).
conversationStoreContract(t, { create: (options) => new MemoryConversationStore(options) })
