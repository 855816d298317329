package delegation

import "time"

// MarkDead records that the grant can no longer be used: the Provider
// refused its token (or it expired) and it could not be refreshed. at is
// stored in UTC, to the second. A dead grant is not refreshable: pact does
// not try its refresh token again. A new grant from Accept (`pact login`)
// replaces a dead one.
func (g *Grant) MarkDead(at time.Time) {
	t := at.UTC().Truncate(time.Second)
	g.Dead, g.DeadSince, g.Refreshable = true, &t, false
}

// normalise fixes what older records may hold: a grant marked dead before
// MarkDead cleared Refreshable still said it was refreshable.
func (g *Grant) normalise() {
	if g.Dead {
		g.Refreshable = false
	}
}

// markDead marks the stored grant for interfaceURL dead. Failures to save are ignored:
// the turn already fails with the reason, and the next one marks it again.
func (m *Manager) markDead(interfaceURL string) {
	g, ok, err := m.Store.Get(interfaceURL)
	if err != nil || !ok || g.Dead {
		return
	}
	g.MarkDead(m.now())
	_ = m.Store.Put(g)
}
