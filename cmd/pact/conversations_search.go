package main

import (
	"errors"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/conversation"
)

// newConversationsSearchCmd is `pact conversations search TEXT`.
func newConversationsSearchCmd(a *app) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "search TEXT",
		Short: "Find stored messages holding every word of TEXT (any conversation), newest first",
		Long: `Find the stored messages (any conversation) that hold every word of TEXT
as a substring, case-insensitively, in any script: words of languages
written without spaces (Chinese, Japanese, Thai) are found inside longer
runs. Newest first. On a PACT_HOME that can only be read, messages added
since the last search cannot be indexed: they are not searched, and pact
says how many.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			text := strings.Join(args, " ")
			if strings.TrimSpace(text) == "" {
				return usageError{errors.New("give words to search for")}
			}
			if limit < 0 {
				return usageError{errors.New("--limit must be 0 (100) or more")}
			}
			ag, err := a.agent()
			if err != nil {
				return err
			}
			found, err := ag.SearchConversations(cmd.Context(), text, limit)
			if err != nil {
				return err
			}
			hits, unindexed := found.Hits, found.Unindexed
			if unindexed > 0 {
				a.io.Eprintf("%s %s added since the last search were not searched: PACT_HOME can only be read here, so they cannot be indexed (search once where it can be written)\n",
					a.io.ErrStyles().Warning.Render("!"), plural(unindexed, "message", "messages"))
			}
			if hits == nil {
				hits = []conversation.Hit{}
			}
			if a.json {
				return a.printJSON(hits)
			}
			if len(hits) == 0 {
				a.io.Eprintf("No stored message holds %q.\n", text)
				return nil
			}
			rows := [][]string{{"TIME", "BRAND", "CONTEXT", "FROM", "MESSAGE"}}
			for _, h := range hits {
				name := h.BrandName
				if name == "" {
					name = h.Brand
				}
				rows = append(rows, []string{h.At.Local().Format(humanTime), line(name), line(h.ContextID),
					who(h.Role), snippet(h.Text, strings.Fields(text), 70)})
			}
			a.io.Table(a.io.Out, rows)
			return nil
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 100, "at most N messages, newest first")
	return cmd
}

// newConversationsShowCmd is `pact conversations show CONTEXT`.
func newConversationsShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show CONTEXT",
		Short: "Print a stored conversation (a contextId, or its first characters)",
		Args:  exactArgs(1, "conversations show needs a contextId (see `pact conversations`)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ag, err := a.agent()
			if err != nil {
				return err
			}
			rec, err := ag.ShowConversation(cmd.Context(), args[0])
			if err != nil {
				return err // ErrNoConversation: exit 5; ErrAmbiguousContext: exit 2
			}
			if a.json {
				return a.printJSON(rec)
			}
			st := a.io.OutStyles()
			name := rec.BrandName
			if name == "" {
				name = rec.Brand
			}
			a.io.Printf("%s  %s  %s\n", st.Bold.Render(line(name)), st.Faint.Render("context "+line(rec.ContextID)), rec.State)
			for _, t := range rec.Turns {
				head := st.Accent.Render(who(t.Role)) + " " + st.Faint.Render(t.At.Local().Format(humanTime))
				if t.State == conversation.TurnUnanswered {
					head += " " + st.Faint.Render("(no answer yet)")
				}
				a.io.Printf("\n%s\n%s\n", head, safe(t.Text))
				for _, p := range t.Parts {
					a.io.Printf("  %s\n", st.Faint.Render("["+line(p.Describe())+"]"))
				}
			}
			return nil
		},
	}
}

func who(role string) string {
	if role == "user" {
		return "you"
	}
	return "agent"
}

// oneLine shows text on one line, cut to n characters.
func oneLine(text string, n int) string {
	s := safe(strings.Join(strings.Fields(text), " "))
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// snippet shows text on one line in at most n characters, keeping the
// first of words it holds (case-insensitively) in view: centred on it, with
// … where text was cut on either side. Without a match, oneLine.
func snippet(text string, words []string, n int) string {
	r := []rune(safe(strings.Join(strings.Fields(text), " ")))
	if len(r) <= n || n < 3 {
		return oneLine(text, n)
	}
	fold := func(rs []rune) []rune {
		out := make([]rune, len(rs))
		for i, c := range rs {
			out[i] = unicode.ToLower(c)
		}
		return out
	}
	low := fold(r)
	at, size := -1, 0
	for _, w := range words {
		wr := fold([]rune(strings.TrimFunc(w, func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) })))
		if len(wr) == 0 {
			continue
		}
		for i := 0; i+len(wr) <= len(low) && (at < 0 || i < at); i++ {
			if string(low[i:i+len(wr)]) == string(wr) {
				at, size = i, len(wr)
				break
			}
		}
	}
	if at < 0 {
		return oneLine(text, n)
	}
	start := max(0, at+size/2-n/2)
	end := min(len(r), start+n)
	start = max(0, end-n)
	head, tail := "", ""
	if start > 0 {
		head, start = "…", start+1
	}
	if end < len(r) {
		tail, end = "…", end-1
	}
	return head + string(r[start:end]) + tail
}
