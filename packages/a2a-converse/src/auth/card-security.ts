/**
 * What an agent card says about authentication (A2A 1.0 §4.5, ProtoJSON): one HTTP bearer scheme per kind of
 * credential the authenticator accepts, and one security requirement per scheme — requirements are
 * alternatives, so either credential will do.
 */
import type { Authenticator } from './authenticator.js'

export interface CardSecurity {
  securitySchemes: Record<string, { httpAuthSecurityScheme: { scheme: string, bearerFormat?: string, description: string } }>
  securityRequirements: Array<{ schemes: Record<string, { list: string[] }> }>
}

export function cardSecurity (accepts: Authenticator['accepts']): CardSecurity {
  const securitySchemes: CardSecurity['securitySchemes'] = {}
  if (accepts.apiKeys) {
    securitySchemes.apiKey = {
      httpAuthSecurityScheme: { scheme: 'Bearer', description: 'An API key issued to the caller, as Authorization: Bearer <key>.' }
    }
  }
  if (accepts.jwt) {
    securitySchemes.jwt = {
      httpAuthSecurityScheme: {
        scheme: 'Bearer', bearerFormat: 'JWT', description: 'An access token (JWT) from the identity provider, as Authorization: Bearer <token>.'
      }
    }
  }
  return {
    securitySchemes,
    securityRequirements: Object.keys(securitySchemes).map((name) => ({ schemes: { [name]: { list: [] } } }))
  }
}
