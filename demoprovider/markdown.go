package demoprovider

import (
	"fmt"
	"strings"
)

// markdownHelp is the agent's answer to a message that mentions
// "markdown": what it can do, as Markdown with a heading, emphasis, a
// nested list, a quote, a table, a code block and a link, so that a
// client's rendering can be tried by hand (`pact chat`, `pact send`).
func (b *brandDef) markdownHelp() string {
	name := strings.TrimSuffix(b.name, ".")
	return fmt.Sprintf("## What I can do\n\n"+
		"I'm **%s** support. I can:\n\n"+
		"1. Look up an order: its *status* and item\n"+
		"   - say its number, for example `A-88213`\n"+
		"   - or ask for *my orders* once your account is connected\n"+
		"2. Cancel or refund an order, **with your permission**\n\n"+
		"> Your assistant asks you before I act on your account.\n\n"+
		"| You say | I answer with | Needs |\n"+
		"| --- | --- | :---: |\n"+
		"| an order number | its status | — |\n"+
		"| my orders | your orders | orders:read |\n"+
		"| cancel A-88213 | a cancellation | orders:cancel |\n\n"+
		"From a terminal:\n\n"+
		"```sh\n"+
		"pact send BRAND \"status of A-88213\"\n"+
		"pact chat BRAND\n"+
		"```\n\n"+
		"More on [PACT](https://pact.example/spec).", name)
}
