package discovery

import (
	"encoding/json"
	"errors"
	"fmt"
)

// a2a-go v2.4.0 reads a security requirement's scopes as a bare array
// ({"paJwt": []}), while PACT §2.1/§5.1 and the A2A 1.0 JSON mapping write
// them as a StringList ({"paJwt": {"list": []}}). normaliseCard rewrites
// both forms (on the card and on each skill) into the SDK's, so cards that
// follow the spec decode into a2a.AgentCard.
func normaliseCard(data []byte) ([]byte, error) {
	var card map[string]json.RawMessage
	if err := json.Unmarshal(data, &card); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("the card is a JSON %s, not an object", te.Value)
		}
		return nil, err
	}
	if err := normaliseRequirements(card); err != nil {
		return nil, fmt.Errorf("securityRequirements: %w", err)
	}
	if raw, ok := card["skills"]; ok && string(raw) != "null" {
		var skills []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &skills); err != nil {
			return nil, fmt.Errorf("skills: %w", err)
		}
		for i, s := range skills {
			if err := normaliseRequirements(s); err != nil {
				return nil, fmt.Errorf("skills[%d].securityRequirements: %w", i, err)
			}
		}
		card["skills"], _ = json.Marshal(skills)
	}
	return json.Marshal(card)
}

type requirementWire struct {
	Schemes map[string]scopesWire `json:"schemes"`
}

// scopesWire accepts {"list": [...]} and [...].
type scopesWire []string

func (s *scopesWire) UnmarshalJSON(b []byte) error {
	var list []string
	if err := json.Unmarshal(b, &list); err == nil {
		*s = list
		return nil
	}
	var obj struct {
		List []string `json:"list"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return fmt.Errorf("scopes must be {\"list\": [...]}: %v", err)
	}
	*s = obj.List
	return nil
}

func normaliseRequirements(obj map[string]json.RawMessage) error {
	raw, ok := obj["securityRequirements"]
	if !ok || string(raw) == "null" {
		return nil
	}
	var reqs []requirementWire
	if err := json.Unmarshal(raw, &reqs); err != nil {
		return err
	}
	out := make([]map[string]map[string][]string, len(reqs))
	for i, r := range reqs {
		schemes := map[string][]string{}
		for name, scopes := range r.Schemes {
			if scopes == nil {
				scopes = []string{}
			}
			schemes[name] = scopes
		}
		out[i] = map[string]map[string][]string{"schemes": schemes}
	}
	obj["securityRequirements"], _ = json.Marshal(out)
	return nil
}
