package store

import "time"

// Pin is what pact remembers of a Brand after first contact, as SSH's
// known_hosts remembers a host key: the origin of the Provider the card's
// interface is on, its interface URL and the RFC 7638 thumbprint of the key
// that signed it ("" when the card was unsigned; the thumbprints separated
// by spaces when the card carried several valid signatures). RetiredKeys
// are the keys a rotation replaced (space separated), never accepted again
// without the User. Brand is the card URL. (*DB).Pin and (*DB).SetPin keep
// them in the profile's database.
type Pin struct {
	Brand          string    `json:"brand"`
	ProviderOrigin string    `json:"providerOrigin"`
	InterfaceURL   string    `json:"interfaceUrl"`
	KeyThumbprint  string    `json:"keyThumbprint"`
	RetiredKeys    string    `json:"retiredKeys,omitempty"`
	PinnedAt       time.Time `json:"pinnedAt"`
}
