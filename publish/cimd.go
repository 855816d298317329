package publish

// ClientMetadata is the OAuth Client ID Metadata Document of a personal
// agent (draft-ietf-oauth-client-id-metadata-document): PACT §5.3 makes
// the issuer URL the OAuth client_id, so the document is served at the
// issuer URL itself, as application/json, and its client_id equals that
// URL exactly. Members are RFC 7591 client metadata:
//
//   - client_id: the issuer;
//   - client_name: the name a Brand's consent page may show;
//   - jwks_uri: where the keys of the client's PA JWTs are (PACT §3.1);
//   - grant_types: the device code grant (RFC 8628, PACT §5.3) and
//     refresh_token; response_types is empty (no redirect flow);
//   - software_id, software_version: "pact" and its version.
//
// token_endpoint_auth_method is left out: a PACT client authenticates with
// its PA JWT as a Bearer credential (§5.3), which is none of RFC 7591's
// registered methods; no client_secret exists.
type ClientMetadata struct {
	ClientID        string   `json:"client_id"`
	ClientName      string   `json:"client_name"`
	JWKSURI         string   `json:"jwks_uri"`
	GrantTypes      []string `json:"grant_types"`
	ResponseTypes   []string `json:"response_types"`
	SoftwareID      string   `json:"software_id"`
	SoftwareVersion string   `json:"software_version"`
}

// GrantTypeDeviceCode is RFC 8628's grant type.
const GrantTypeDeviceCode = "urn:ietf:params:oauth:grant-type:device_code"

// NewClientMetadata is the metadata document of issuer.
func NewClientMetadata(issuer, jwksURI, name, version string) ClientMetadata {
	return ClientMetadata{
		ClientID: issuer, ClientName: name, JWKSURI: jwksURI,
		GrantTypes: []string{GrantTypeDeviceCode, "refresh_token"}, ResponseTypes: []string{},
		SoftwareID: "pact", SoftwareVersion: version,
	}
}
