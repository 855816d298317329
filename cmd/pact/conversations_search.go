package main

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/conversation"
)

// newConversationsSearchCmd is `pact conversations search TEXT`.
func newConversationsSearchCmd(a *app) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "search TEXT",
		Short: "Find stored messages holding every word of TEXT (any conversation)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			text := strings.Join(args, " ")
			if strings.TrimSpace(text) == "" {
				return usageError{errors.New("give words to search for")}
			}
			if limit < 0 {
				return usageError{errors.New("--limit must be 0 (100) or more")}
			}
			opts, err := a.sessionOptions()
			if err != nil {
				return err
			}
			hits, err := opts.Store.Search(text, limit)
			if err != nil {
				return err
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
					who(h.Role), oneLine(h.Text, 70)})
			}
			a.io.Table(a.io.Out, rows)
			return nil
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 100, "at most N messages, best matches first")
	return cmd
}

// newConversationsShowCmd is `pact conversations show CONTEXT`.
func newConversationsShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show CONTEXT",
		Short: "Print a stored conversation (a contextId, or its first characters)",
		Args:  exactArgs(1, "conversations show needs a contextId (see `pact conversations`)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := a.sessionOptions()
			if err != nil {
				return err
			}
			rec, err := opts.Store.Show(args[0])
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
				a.io.Printf("\n%s %s\n%s\n", st.Accent.Render(who(t.Role)), st.Faint.Render(t.At.Local().Format(humanTime)), safe(t.Text))
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
