package tui

// The scrollback never builds one string of the whole conversation. Each turn's rendering is
// cached by (width, version) and the view is addressed by the turn and line at its top, so a
// keystroke or a resize only renders the turns that are visible, whatever the length of the
// conversation.

// entry is one turn of the scrollback with its cached rendering.
type entry struct {
	turn    Turn
	version int // bumped when the turn changes

	cw, cv int      // width and version of lines
	cg     int      // scroller generation of lines
	lines  []string // cached rendering, nil when not rendered yet
}

// pos is a place in the scrollback: line `line` of turn `turn`.
type pos struct{ turn, line int }

func (p pos) before(q pos) bool {
	return p.turn < q.turn || (p.turn == q.turn && p.line < q.line)
}

// scroller is the scrollback: the turns and where the view is.
type scroller struct {
	entries []*entry
	follow  bool // the view sticks to the bottom
	top     pos  // first visible line when !follow
	unseen  bool // turns arrived below the view while the User was scrolled up

	render  func(Turn, int) []string
	renders int // how many turn renderings were computed (tests check caching)
	gen     int // bumped when every rendering is stale (a new theme)
}

// restyle marks every cached rendering stale; turns are drawn again as they come into view.
func (s *scroller) restyle() { s.gen++ }

// add appends turns; the view moves with them only if it was following the bottom.
func (s *scroller) add(ts ...Turn) {
	for _, t := range ts {
		s.entries = append(s.entries, &entry{turn: t})
	}
	if len(ts) > 0 && !s.follow {
		s.unseen = true
	}
}

// lines returns the rendering of turn i at width w, from the cache when it is current.
func (s *scroller) lines(i, w int) []string {
	e := s.entries[i]
	if e.lines == nil || e.cw != w || e.cv != e.version || e.cg != s.gen {
		e.lines = s.render(e.turn, w)
		e.cw, e.cv, e.cg = w, e.version, s.gen
		s.renders++
	}
	return e.lines
}

// bottomTop returns the top of the last screenful of h lines at width w.
func (s *scroller) bottomTop(w, h int) pos {
	need := h
	for i := len(s.entries) - 1; i >= 0; i-- {
		n := len(s.lines(i, w))
		if n >= need {
			return pos{i, n - need}
		}
		need -= n
	}
	return pos{}
}

// clampTop keeps top on an existing line (after a resize a turn may have fewer lines).
func (s *scroller) clampTop(w int) {
	if len(s.entries) == 0 {
		s.top = pos{}
		return
	}
	if s.top.turn >= len(s.entries) {
		s.top = pos{len(s.entries) - 1, 0}
	}
	if n := len(s.lines(s.top.turn, w)); s.top.line >= n {
		s.top.line = n - 1
	}
	if s.top.line < 0 {
		s.top.line = 0
	}
}

// visible returns the h lines to draw at width w (fewer when the conversation is short).
func (s *scroller) visible(w, h int) []string {
	if h <= 0 || len(s.entries) == 0 {
		return nil
	}
	start := pos{}
	if s.follow {
		start = s.bottomTop(w, h)
	} else {
		s.clampTop(w)
		start = s.top
	}
	out := make([]string, 0, h)
	for i := start.turn; i < len(s.entries) && len(out) < h; i++ {
		ls := s.lines(i, w)
		if i == start.turn {
			ls = ls[min(start.line, len(ls)):]
		}
		out = append(out, ls[:min(len(ls), h-len(out))]...)
	}
	return out
}

// up scrolls n lines towards the beginning.
func (s *scroller) up(n, w, h int) {
	if len(s.entries) == 0 {
		return
	}
	if s.follow {
		s.top = s.bottomTop(w, h)
		s.follow = false
	}
	s.clampTop(w)
	for n > 0 {
		if s.top.line > 0 {
			d := min(n, s.top.line)
			s.top.line -= d
			n -= d
			continue
		}
		if s.top.turn == 0 {
			break
		}
		s.top.turn--
		s.top.line = len(s.lines(s.top.turn, w)) - 1
		n--
	}
}

// down scrolls n lines towards the end; reaching the bottom resumes following it.
func (s *scroller) down(n, w, h int) {
	if s.follow || len(s.entries) == 0 {
		return
	}
	s.clampTop(w)
	bottom := s.bottomTop(w, h)
	for n > 0 && s.top.before(bottom) {
		l := len(s.lines(s.top.turn, w))
		if s.top.line+1 < l {
			s.top.line++
		} else {
			s.top.turn++
			s.top.line = 0
		}
		n--
	}
	if !s.top.before(bottom) {
		s.end()
	}
}

// home shows the first line of the conversation.
func (s *scroller) home() {
	s.follow = false
	s.top = pos{}
}

// end goes to the bottom and follows it.
func (s *scroller) end() {
	s.follow = true
	s.unseen = false
}
