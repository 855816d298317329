package delegation

// SecretKeys are the secret-store entries that hold the tokens of the grant
// for interfaceURL (access and refresh), under prefix (e.g. "default/"):
// what `pact keyring move` carries over to another backend.
func SecretKeys(prefix, interfaceURL string) []string {
	return []string{secretKey(prefix, interfaceURL, "access"), secretKey(prefix, interfaceURL, "refresh")}
}
