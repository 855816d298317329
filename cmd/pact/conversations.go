package main

import (
	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/conversation"
)

func newConversationsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "conversations",
		Short: "List stored conversations: brand, contextId, last message, open or closed",
		Args:  exactArgs(0, "conversations takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ag, err := a.agent()
			if err != nil {
				return err
			}
			list, err := ag.Conversations(cmd.Context())
			if err != nil {
				return err
			}
			if list == nil {
				list = []conversation.Summary{}
			}
			if a.json {
				return a.printJSON(list)
			}
			if len(list) == 0 {
				a.io.Eprintf("No conversations yet. Start one with: pact chat BRAND\n")
				return nil
			}
			rows := [][]string{{"BRAND", "CONTEXT", "LAST MESSAGE", "STATE"}}
			for _, c := range list {
				name := brandLabel(c.BrandName, c.Brand, c.InterfaceURL)
				state := c.State
				if state == conversation.StateUnknown {
					state = "unknown to the Provider"
				}
				if c.Current && c.State == conversation.StateOpen {
					state += " (continued by send/chat)"
				}
				rows = append(rows, []string{name, c.ContextID, c.LastMessageAt.Local().Format(humanTime), state})
			}
			a.io.Table(a.io.Out, rows)
			return nil
		},
	}
	cmd.AddCommand(newConversationsSearchCmd(a), newConversationsShowCmd(a))
	return cmd
}

// completeBrands offers the brands of stored conversations.
func (a *app) completeBrands(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ag, err := a.agent()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list, _ := ag.Conversations(cmd.Context())
	seen := map[string]bool{}
	var out []string
	for _, c := range list {
		if !seen[c.Brand] {
			seen[c.Brand] = true
			out = append(out, c.Brand)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
