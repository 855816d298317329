package agent

// Granted compares the scopes a login asked for with those the grant holds
// (the User may uncheck some on the Brand's page, PACT §5.3): Missing were
// asked and not granted, Also are held beyond what was asked (granted
// earlier, or added by the Brand), each in the order given.
type Granted struct {
	Missing []string
	Also    []string
}

// CompareGrant is Granted for asked and the grant's scopes held.
func CompareGrant(asked, held []string) Granted {
	in := func(list []string) map[string]bool {
		m := make(map[string]bool, len(list))
		for _, s := range list {
			m[s] = true
		}
		return m
	}
	h, a := in(held), in(asked)
	var g Granted
	for _, s := range asked {
		if !h[s] {
			g.Missing = append(g.Missing, s)
		}
	}
	for _, s := range held {
		if !a[s] {
			g.Also = append(g.Also, s)
		}
	}
	return g
}
