package demoprovider

import (
	"encoding/json"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Security scheme names on the demo cards (§2.1, §5.1).
const (
	schemePAJWT          a2a.SecuritySchemeName = "paJwt"
	schemeUserDelegation a2a.SecuritySchemeName = "userDelegation"
)

// cardName is the name b's Agent Card carries.
func (b *brandDef) cardName() string { return b.name + " Support" }

// card builds the Agent Card of b per §2.1: one HTTP+JSON 1.0 interface at
// {provider}/a2a/{brandId}, the paJwt Bearer/JWT scheme alone in the first
// securityRequirements entry and, when the Brand offers delegation, the
// userDelegation device-code scheme and a second entry naming both (§5.1).
func (s *Server) card(b *brandDef) *a2a.AgentCard {
	iface := s.interfaceURL(b)
	c := &a2a.AgentCard{
		Name:        b.cardName(),
		Description: "Customer support for " + b.name + " (PACT demo Provider).",
		SupportedInterfaces: []*a2a.AgentInterface{{
			URL:             iface,
			ProtocolBinding: a2a.TransportProtocolHTTPJSON,
			ProtocolVersion: "1.0",
		}},
		Provider:           &a2a.AgentProvider{Org: "PACT Demo Provider", URL: s.url},
		Version:            "0.1.0",
		Capabilities:       a2a.AgentCapabilities{Streaming: b.streaming, ExtendedAgentCard: b.extendedCard},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		SecuritySchemes: a2a.NamedSecuritySchemes{
			schemePAJWT: a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: "JWT"},
		},
		SecurityRequirements: a2a.SecurityRequirementsOptions{
			{schemePAJWT: {}},
		},
		Skills: s.skills(b),
	}
	if len(b.scopes) > 0 {
		scopes := make(map[string]string, len(b.scopes))
		for _, sc := range b.scopes {
			scopes[sc.ID] = sc.Description
		}
		c.SecuritySchemes[schemeUserDelegation] = a2a.OAuth2SecurityScheme{
			Flows: a2a.DeviceCodeOAuthFlow{
				DeviceAuthorizationURL: iface + "/oauth/device_authorization",
				TokenURL:               iface + "/oauth/token",
				Scopes:                 scopes,
			},
			Oauth2MetadataURL: iface + "/oauth/.well-known/oauth-authorization-server",
		}
		c.SecurityRequirements = append(c.SecurityRequirements,
			a2a.SecurityRequirements{schemePAJWT: {}, schemeUserDelegation: {}})
	}
	s.faultCard(c)
	return c
}

// cardJSON renders the card as the spec's wire JSON. The SDK's
// a2a.SecurityRequirementsOptions encodes each scheme's scopes as a bare
// array ("paJwt": []), but A2A 1.0 and PACT §2.1/§5.1 write a StringList
// object ("paJwt": {"list": []}); securityRequirements is therefore
// re-encoded here in the spec's form.
func (s *Server) cardJSON(b *brandDef) ([]byte, error) { return specCardJSON(s.card(b)) }

// specCardJSON renders c with its securityRequirements, and those of each
// skill, in the spec's StringList form (see cardJSON).
func specCardJSON(c *a2a.AgentCard) ([]byte, error) {
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if m["securityRequirements"], err = specRequirements(c.SecurityRequirements); err != nil {
		return nil, err
	}
	if len(c.Skills) > 0 {
		var skills []map[string]json.RawMessage
		if err := json.Unmarshal(m["skills"], &skills); err != nil {
			return nil, err
		}
		for i, sk := range c.Skills {
			if len(sk.SecurityRequirements) == 0 {
				continue
			}
			if skills[i]["securityRequirements"], err = specRequirements(sk.SecurityRequirements); err != nil {
				return nil, err
			}
		}
		if m["skills"], err = json.Marshal(skills); err != nil {
			return nil, err
		}
	}
	return json.Marshal(m)
}

// specRequirements encodes requirements as A2A 1.0 writes them:
// [{"schemes": {NAME: {"list": [SCOPE…]}}}].
func specRequirements(rs a2a.SecurityRequirementsOptions) (json.RawMessage, error) {
	type stringList struct {
		List []string `json:"list"`
	}
	type requirement struct {
		Schemes map[a2a.SecuritySchemeName]stringList `json:"schemes"`
	}
	reqs := make([]requirement, 0, len(rs))
	for _, r := range rs {
		schemes := make(map[a2a.SecuritySchemeName]stringList, len(r))
		for name, scopes := range r {
			schemes[name] = stringList{List: append([]string{}, scopes...)}
		}
		reqs = append(reqs, requirement{Schemes: schemes})
	}
	return json.Marshal(reqs)
}

// serveCard serves the public card (§2.1, no authentication), with the
// ETag and Last-Modified a cache revalidates with.
func (s *Server) serveCard(w http.ResponseWriter, r *http.Request, b *brandDef) {
	// Cards change rarely: let personal agents keep one for five minutes,
	// then revalidate it (ETag, Last-Modified; see serveCacheable).
	w.Header().Set("Cache-Control", "public, max-age=300")
	body, err := s.cardJSON(b)
	if err != nil {
		writeA2AError(w, ReasonInternal, "the card could not be built")
		return
	}
	s.serveCacheable(w, r, body, "application/json")
}
