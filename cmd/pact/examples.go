package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// examples are the Examples section of every command's help (as every gh
// command has), by command path without "pact ": one home, applied to the
// tree by addExamples. Each is a few command lines a User can copy, with a
// comment where the line alone does not say what it does.
// TestEveryCommandHasExamples holds every command to one.
var examples = map[string]string{
	"": `
# the whole protocol on this machine, against a built-in demo Provider
$ pact demo
# a conversation with a Brand
$ pact chat brand.example.com
$ pact send brand.example.com 'Where is my order A-88213?'`,
	"backup": `
$ pact backup ~/pact-backup.db
# another profile's history, replacing an older backup
$ pact --profile work backup work.db --force`,
	"card": `
$ pact card brand.example.com
$ pact card https://brand.example.com/support/agent-card.json --json
# what you may use there (fewer skills before pact login, more after)
$ pact card brand.example.com --extended
# accept a changed card, only the one you were shown
$ pact card brand.example.com --trust --expect FINGERPRINT`,
	"chat": `
$ pact chat brand.example.com
$ pact chat brand.example.com --new
# line mode: each line of stdin is a message, each reply a JSON line
$ printf 'Where is my order A-88213?\n' | pact chat brand.example.com --json`,
	"completion": `
$ source <(pact completion bash)
$ pact completion zsh > "${fpath[1]}/_pact"`,
	"completion bash": `
# needs the bash-completion package
$ source <(pact completion bash)
$ pact completion bash > /etc/bash_completion.d/pact`,
	"completion fish": `
$ pact completion fish > ~/.config/fish/completions/pact.fish`,
	"completion powershell": `
PS> pact completion powershell | Out-String | Invoke-Expression`,
	"completion zsh": `
$ pact completion zsh > "${fpath[1]}/_pact"`,
	"conversations": `
$ pact conversations
$ pact conversations --json --jq '.[] | select(.state == "open") | .contextId'`,
	"conversations search": `
$ pact conversations search 'refund'
$ pact conversations search A-88213 --limit 5`,
	"conversations show": `
$ pact conversations show 01a2353f-cea7-7c52-8ba1-9404d8577185
# a unique prefix is enough
$ pact conversations show 01a2353f`,
	"demo": `
$ pact demo
# log in with your own browser rather than the built-in scripted User
$ pact demo --browser
# the tour as JSON Lines, one object per step
$ pact demo --json`,
	"demo approve": `
# one terminal: pact login answers its own link as the demo User
$ PACT_BROWSER='pact demo approve' pact login http://127.0.0.1:8791 --scope orders:read
# or from another terminal, with the Link pact login printed
$ pact demo approve 'http://127.0.0.1:8790/a2a/01JEXAMPLECO/oauth/device?user_code=WDJB-MJHT'
$ pact demo approve --user omar --scope orders:read 'LINK'`,
	"demo serve": `
$ pact demo serve
# free ports instead of 8790-8792
$ pact demo serve --addr 127.0.0.1:0
# a Provider that breaks one PACT rule, for pact provider check
$ pact demo serve --fault list`,
	"devices": `
$ pact devices
$ pact devices --json --jq '.[] | select(.state == "active") | .id'`,
	"devices add": `
# a one-time code for your next device; run the command it prints there
$ pact devices add`,
	"devices list": `
$ pact devices list --json`,
	"devices revoke": `
# a lost phone: its next call is refused
$ pact devices revoke d_2bc4de6fg8hj9kmn`,
	"doctor": `
$ pact doctor
$ pact doctor --json --jq '.checks[] | select(.status != "ok")'`,
	"grants": `
$ pact grants
$ pact grants --json --jq '.[] | select(.dead) | .brand'`,
	"help": `
$ pact help send
$ pact help receipts verify`,
	"init": `
$ pact init --issuer https://pa.example.com
# on a machine without an OS keyring (a server, a container)
$ pact init --issuer https://pa.example.com --keyring file
# for the demo Provider on this machine
$ pact init --issuer http://127.0.0.1:8787
# join a pact server as one of your devices, with the code its operator gave you
$ pact init --server https://pa.example.com --code CODE
# the signing key on a PKCS#11 token, or in AWS KMS (README: Keys in hardware or a KMS)
$ pact init --issuer https://pa.example.com --key 'pkcs11:token=pact;object=pa-key'
$ pact init --issuer https://pa.example.com --key awskms:alias/pact-signing`,
	"jwks": `
$ pact jwks
$ pact jwks --jq '.keys[].kid'`,
	"jwks export": `
$ pact jwks export site/
# then upload site/ so that it answers at your issuer, and check it
$ pact doctor`,
	"jwks serve": `
$ pact jwks serve &
$ pact jwks serve --addr 127.0.0.1:8787`,
	"key": `
$ pact key list
$ pact key rotate`,
	"key activate": `
$ pact key activate -- NEWKID
# before the live jwks_uri serves it (Providers refuse it until then)
$ pact key activate --force -- NEWKID`,
	"key list": `
$ pact key list
$ pact key list --json --jq '.[] | select(.active) | .kid'`,
	"key retire": `
$ pact key retire -- OLDKID`,
	"key rotate": `
$ pact key rotate
$ pact key rotate --alg RS256
# the new key in AWS KMS, on a PKCS#11 token, or back in the keyring
$ pact key rotate --key awskms:alias/pact-2027
$ pact key rotate --key 'pkcs11:token=pact;object=pa-2027'
$ pact key rotate --key keyring:`,
	"key pin": `
# asked on the terminal, without echo; checked with the token, then kept in the keyring
$ pact key pin
$ pact key pin --forget`,
	"keyring": `
$ pact keyring move --to file`,
	"keyring move": `
$ pact keyring move --to file
$ pact keyring move --to os`,
	"login": `
$ pact login brand.example.com --scope orders:read
$ pact login brand.example.com --scope orders:read --scope orders:cancel
# print the link instead of opening a browser
$ pact login brand.example.com --scope orders:read --no-browser`,
	"logout": `
$ pact logout brand.example.com`,
	"mcp": `
# in an MCP client's configuration: {"command": "pact", "args": ["mcp"]}
$ pact mcp
$ pact --profile work mcp`,
	"provider": `
$ pact provider add https://provider.example.com --audience pact-demo
$ pact provider list`,
	"provider add": `
$ pact provider add https://provider.example.com --audience aud-7f3a
# the demo Provider of pact demo serve
$ pact provider add http://127.0.0.1:8790 --audience pact-demo`,
	"provider check": `
$ pact provider check brand.example.com
# with a User: log in and run the delegation checks too
$ pact provider check brand.example.com --scope orders:read
$ pact provider check brand.example.com --only card,identity --junit results.xml
# what would be sent, sending nothing
$ pact provider check brand.example.com --dry-run`,
	"provider list": `
$ pact provider list
$ pact provider list --json`,
	"provider remove": `
$ pact provider remove https://provider.example.com`,
	"receipts": `
$ pact receipts list
$ pact receipts verify`,
	"receipts export": `
$ pact receipts export --all -o receipts.jsonl
$ pact receipts export --all --brand brand.example.com -o - | gzip > example.jsonl.gz
$ pact receipts export 579e4627013e -o one.jsonl`,
	"receipts import": `
$ pact receipts import receipts.jsonl`,
	"receipts list": `
$ pact receipts list
$ pact receipts list --brand brand.example.com --since 2026-11-01
$ pact receipts list --scope orders:cancel --limit 10 --json`,
	"receipts show": `
$ pact receipts show 579e4627013e
$ pact receipts show 579e4627013e --json --jq .jws`,
	"receipts verify": `
$ pact receipts verify
$ pact receipts verify 579e4627013e --offline
# a bundle from anyone, with no profile
$ pact receipts verify --bundle receipts.jsonl`,
	"restore": `
$ pact restore ~/pact-backup.db
$ pact --profile work restore work.db`,
	"send": `
$ pact send brand.example.com 'Where is my order A-88213?'
$ pact send brand.example.com --new 'Cancel order A-10001'
# the reply as JSON, for scripts
$ pact send brand.example.com 'Show my orders' --json --jq '.reply.message.parts[].text'`,
	"serve": `
# the server's identity, once, then serve it behind a reverse proxy that terminates TLS
$ pact --profile server init --issuer https://pa.example.com
$ pact --profile server serve --addr 127.0.0.1:8080
# TLS itself, on every interface
$ pact --profile server serve --addr :443 --tls-cert cert.pem --tls-key key.pem`,
	"serve provider": `
$ pact --profile server serve provider list`,
	"serve provider add": `
# the audience the Provider assigned to the server's issuer
$ pact --profile server serve provider add https://provider.example.com --audience AUD`,
	"serve provider list": `
$ pact --profile server serve provider list --json`,
	"serve provider remove": `
$ pact --profile server serve provider remove https://provider.example.com`,
	"serve user": `
$ pact --profile server serve user add alice`,
	"serve user add": `
# prints a one-time enrolment code (15 minutes, once) for alice's first device
$ pact --profile server serve user add alice
$ CODE=$(pact --profile server serve user add bob)`,
	"serve user code": `
# another code, for alice's next device or one that expired
$ pact --profile server serve user code alice`,
	"serve user list": `
$ pact --profile server serve user list
$ pact --profile server serve user list --json`,
	"serve user remove": `
$ pact --profile server serve user remove bob`,
	"version": `
$ pact version
$ pact version --json`,
	"whoami": `
$ pact whoami
$ pact whoami --json --jq .jwks_uri`,
}

// addExamples sets each command's Example from examples (indented as
// cobra shows it).
func addExamples(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), root.Name()), " ")
		if ex, ok := examples[path]; ok && c.Example == "" {
			var b strings.Builder
			for i, l := range strings.Split(strings.TrimSpace(ex), "\n") {
				if i > 0 {
					b.WriteByte('\n')
				}
				b.WriteString("  " + l)
			}
			c.Example = b.String()
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
