package store

import "time"

// Pin is what pact remembers of a Brand after first contact, as SSH's
// known_hosts remembers a host key: the Provider the card named, its
// interface URL and the RFC 7638 thumbprint of the key that signed it
// ("" when the card was unsigned). Brand is the card URL. (*DB).Pin and
// (*DB).SetPin keep them in the profile's database.
type Pin struct {
	Brand          string    `json:"brand"`
	ProviderOrigin string    `json:"providerOrigin"`
	InterfaceURL   string    `json:"interfaceUrl"`
	KeyThumbprint  string    `json:"keyThumbprint"`
	PinnedAt       time.Time `json:"pinnedAt"`
}
