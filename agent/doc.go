// Package agent is the personal agent's use cases, one home for every
// front-end: `pact send` and `pact chat` (cmd/pact), the full-screen chat
// (chatbackend) and the MCP server (mcpserver) each parse their input, call
// this package and present what it reports in their own way.
//
// One turn, end to end (docs/architecture.md draws it):
//
//  1. Open: the Brand argument becomes a card URL, the Agent Card is fetched
//     (or taken from the card cache) and checked (PACT §2.1, §5.1), its
//     signature verified (A2A §8.4) and compared with the Brand's pin; a
//     changed card stops here, before any request reaches the Provider
//     (conversation.Open, discovery.CheckPin). `pact card --trust` records a
//     pin through Trust.
//  2. Send: the message goes out with a fresh PA JWT (§3.2) and, when the User
//     delegated, the delegation token (§5.4), in the stored conversation
//     (§4.2); retries reuse the messageId (§4.3). A conversation the Provider
//     closed is the ContextClosed event (Front.Restart), unless the message
//     may already have been delivered: then the turn ends with
//     conversation.OutcomeUnknownError, and the message is never sent again
//     as a new one; the same text sent later goes under its messageId.
//  3. Step-up (§5.5): a reply in TASK_STATE_AUTH_REQUIRED becomes a StepUp,
//     split into the scopes the card declares (which pact may ask the User
//     for) and ids it does not (never asked for, never put into a command).
//     The front-end answers the "needs these scopes" event (Front.NeedsScopes)
//     its own way — the CLI prints and opens the browser, the chat shows its
//     login panel, MCP returns the login to the assistant — or leaves it
//     pending (*StepUpPending). Once granted, the message goes again in the
//     same conversation with a new messageId.
//  4. Receipt (§5.6): the reply's receipt is verified against the grant used
//     and archived (verified, or kept apart with its problems) inside
//     conversation.Session; Result.Receipt says which.
//
// Around the turn: Trust records a changed card the User accepted and
// LookPin compares one with its pin without recording; CompareGrant says
// what a login granted against what it asked; Tally counts re-verified
// receipts (verified, failed, not checked) for `pact receipts verify`, MCP
// verify_receipts and the tour; Label and ReceiptLabel name Brands as every
// table does; Logout forgets a Brand's delegation, fetching its card only
// when the name given matches no stored grant.
package agent
