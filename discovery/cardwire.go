package discovery

import (
	"encoding/json"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// cardWire is a Card's JSON form, every field of it: the card as received
// under "card", and what pact found (interface, PA-JWT scheme, delegation,
// problems, signature check). It is how a checked card crosses between a
// `pact serve` and a device (the agent interface): the device shows the
// card as the server checked it, without fetching it again.
type cardWire struct {
	URL          string          `json:"url"`
	FinalURL     string          `json:"finalUrl,omitempty"`
	Raw          json.RawMessage `json:"card"`
	InterfaceURL string          `json:"interfaceUrl"`
	PAScheme     string          `json:"paScheme"`
	Delegation   *delegationWire `json:"delegation,omitempty"`
	Problems     []string        `json:"problems,omitempty"`
	Signature    *keptSignature  `json:"signature,omitempty"`
}

// delegationWire is a Delegation with its scheme's name.
type delegationWire struct {
	Scheme                 string            `json:"scheme"`
	Scopes                 map[string]string `json:"scopes"`
	DeviceAuthorizationURL string            `json:"deviceAuthorizationUrl"`
	TokenURL               string            `json:"tokenUrl"`
	OAuth2MetadataURL      string            `json:"oauth2MetadataUrl"`
}

// MarshalJSON is the card's JSON form: {"url", "finalUrl"?, "card" (as
// received), "interfaceUrl", "paScheme", "delegation"?, "problems"?,
// "signature"?}. Nothing is checked again when it is read back.
func (c *Card) MarshalJSON() ([]byte, error) {
	w := cardWire{URL: c.URL, FinalURL: c.FinalURL, Raw: c.Raw, InterfaceURL: c.InterfaceURL, PAScheme: c.PAScheme,
		Problems: c.Problems, Signature: (*keptSignature)(c.Signature)}
	if d := c.Delegation; d != nil {
		w.Delegation = &delegationWire{Scheme: d.Scheme, Scopes: d.Scopes, DeviceAuthorizationURL: d.DeviceAuthorizationURL,
			TokenURL: d.TokenURL, OAuth2MetadataURL: d.OAuth2MetadataURL}
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads the JSON form MarshalJSON writes; the A2A card is
// decoded from "card" as Parse decodes it.
func (c *Card) UnmarshalJSON(b []byte) error {
	var w cardWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = Card{URL: w.URL, FinalURL: w.FinalURL, Raw: w.Raw, InterfaceURL: w.InterfaceURL, PAScheme: w.PAScheme,
		Problems: w.Problems, Signature: (*Signature)(w.Signature)}
	if d := w.Delegation; d != nil {
		c.Delegation = &Delegation{Scheme: d.Scheme, Scopes: d.Scopes, DeviceAuthorizationURL: d.DeviceAuthorizationURL,
			TokenURL: d.TokenURL, OAuth2MetadataURL: d.OAuth2MetadataURL}
	}
	if len(w.Raw) > 0 && string(w.Raw) != "null" {
		norm, err := normaliseCard(w.Raw)
		if err == nil {
			var card a2a.AgentCard
			if err = json.Unmarshal(norm, &card); err == nil {
				c.Card = &card
			}
		}
		if err != nil {
			return fmt.Errorf("the card of %s: not an A2A Agent Card: %v", w.URL, err)
		}
	}
	return nil
}
