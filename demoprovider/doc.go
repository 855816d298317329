// Package demoprovider is the built-in demo PACT Provider: a real Provider on
// loopback that `pact demo`, `pact demo serve` and the end-to-end tests run
// against.
//
// It implements the PACT 1.0 Identity profile (§2, §3, §4, §6) and the
// Delegated profile (§5) for two Brands, "Example Co." (brandId
// 01JEXAMPLECO) and "Other Shop" (brandId 01JOTHERSHOP). Each Brand also gets
// a "brand site": a separate loopback listener that plays the Brand's own
// domain: it serves the Brand's card at /.well-known/agent-card.json signed
// with the Brand's own key (A2A 1.0 §8.4), publishes that key at
// /.well-known/jwks.json, and hosts the Brand's login page (§5.3). The
// Provider's own copy of the card, at {provider}/a2a/{brandId}/, is unsigned.
//
// Why the A2A transport is hand-written rather than a2asrv.NewRESTHandler:
// PACT adds rules the SDK server cannot express: 401 with no body and a
// WWW-Authenticate challenge before the body is read (§3.4), routing before
// authentication (§2.2), ErrorInfo as the FIRST entry of error.details (§6;
// the SDK appends it last), stored replies for repeated messageIds (§4.3) and
// context ownership per (personal agent, sub, Brand) (§4.2). The wire types
// are the SDK's (package a2a) throughout, and the public Agent Card is served
// by a2asrv.NewStaticAgentCardHandler.
package demoprovider
