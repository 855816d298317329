package store

import "time"

// Pin is what pact remembers of a Brand after first contact, as SSH's
// known_hosts remembers a host key: the Provider the card named, its
// interface URL and the RFC 7638 thumbprint of the key that signed it
// ("" when the card was unsigned). Brand is the card URL.
//
// (The SQLite store defines the same type; this file goes when it lands.)
type Pin struct {
	Brand          string    `json:"brand"`
	ProviderOrigin string    `json:"providerOrigin"`
	InterfaceURL   string    `json:"interfaceUrl"`
	KeyThumbprint  string    `json:"keyThumbprint"`
	PinnedAt       time.Time `json:"pinnedAt"`
}
