package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// checkCommandPath returns a usage error (exit 2) when args name a command
// that does not exist: an unknown command (`pact frob`) or an unknown
// subcommand of a command group (`pact receipts frob`, which cobra would
// answer with the group's help and exit 0). The message ends with the
// `--help` to run. Flags are left to cobra.
func checkCommandPath(root *cobra.Command, args []string) error {
	if len(args) > 0 && strings.HasPrefix(args[0], "__") {
		return nil // cobra's hidden completion commands, added at Execute
	}
	if err := leadingUnknownFlag(root, args); err != nil {
		return err
	}
	c, rest, err := root.Find(args)
	if err == nil && c == helpCommand(root) {
		// `pact help COMMAND…`: the path after help must exist too.
		return checkCommandPath(root, rest)
	}
	if err != nil {
		// cobra: `unknown command "frob" for "pact"` plus suggestions.
		return usageError{fmt.Errorf("%s\nRun 'pact --help' for the commands", strings.TrimRight(err.Error(), "\n"))}
	}
	if c.Runnable() || !c.HasSubCommands() {
		return nil
	}
	pos, unknownFlag := positionals(c, rest)
	if unknownFlag {
		// `pact --jsno whoami`: cobra reports the flag ("unknown flag:
		// --jsno"), which is what was mistyped; whoami is no command name.
		return nil
	}
	if len(pos) == 0 {
		return nil // the group's help, as asked
	}
	msg := fmt.Sprintf("unknown command %q for %q", pos[0], c.CommandPath())
	if c.SuggestionsMinimumDistance <= 0 {
		// cobra sets its default (2) only on the path it walks itself:
		// without it SuggestionsFor finds nothing for `receipts lst`.
		c.SuggestionsMinimumDistance = 2
	}
	if s := c.SuggestionsFor(pos[0]); len(s) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t") + "\n"
	}
	return usageError{fmt.Errorf("%s\nRun '%s --help' for its commands", msg, c.CommandPath())}
}

// flagError is a usage error about c's flags (unknown, missing value, bad
// value) that ends with the --help that lists them.
func flagError(c *cobra.Command, err error) error {
	return usageError{fmt.Errorf("%s\nRun '%s --help' for its flags", strings.TrimRight(err.Error(), "\n"), c.CommandPath())}
}

// leadingUnknownFlag reports a flag unknown to the command reached so far,
// met while args still walk down the command tree (`pact --jsno key list`,
// `pact --all receipts verify`, `pact receipts --frob verify`). Cobra would
// take the word after such a flag for its value and report the next word as
// an unknown command; the mistyped flag is what to report. The walk stops at
// the first word that is not a subcommand and at a command without
// subcommands (its own arguments, which may begin with "-", are left to it
// and to cobra).
func leadingUnknownFlag(root *cobra.Command, args []string) error {
	c := root
	for i := 0; i < len(args) && c.HasSubCommands(); i++ {
		a := args[i]
		c.InitDefaultHelpFlag() // -h and --help are flags of every command
		switch {
		case a == "--":
			return nil
		case strings.HasPrefix(a, "--"):
			name, _, hasValue := strings.Cut(a[2:], "=")
			f := lookupFlag(c, name)
			if f == nil {
				return flagError(c, fmt.Errorf("unknown flag: --%s", name))
			}
			if !hasValue && f.NoOptDefVal == "" {
				i++ // the flag's value
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			body, _, hasValue := strings.Cut(a[1:], "=")
			for j, r := range body {
				f := lookupShort(c, string(r))
				if f == nil {
					return flagError(c, fmt.Errorf("unknown shorthand flag: %q in %s", r, a))
				}
				if f.NoOptDefVal == "" {
					if j == len(body)-1 && !hasValue {
						i++ // -x VALUE
					}
					break // the rest of the word is the value
				}
			}
		default:
			sub := subcommand(c, a)
			if sub == nil {
				return nil // an unknown command or c's arguments: root.Find's to say
			}
			c = sub
		}
	}
	return nil
}

// subcommand is c's subcommand named (or aliased) name, or nil.
func subcommand(c *cobra.Command, name string) *cobra.Command {
	for _, sub := range c.Commands() {
		if sub.Name() == name || sub.HasAlias(name) {
			return sub
		}
	}
	return nil
}

// positionals returns the arguments of args that are not flags or flag
// values of c (its own and inherited flags), without parsing anything, and
// whether a flag before the first positional is unknown to c (then where
// its value ends cannot be told, and the flag is the error to report).
func positionals(c *cobra.Command, args []string) (out []string, unknownFlag bool) {
	c.InitDefaultHelpFlag() // -h and --help are flags of every command
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(out, args[i+1:]...), false
		case strings.HasPrefix(a, "--"):
			name, _, hasValue := strings.Cut(a[2:], "=")
			f := lookupFlag(c, name)
			if f == nil && len(out) == 0 {
				return nil, true
			}
			if f != nil && !hasValue && f.NoOptDefVal == "" {
				i++ // the flag's value
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			f := lookupShort(c, a[1:2])
			if f == nil && len(out) == 0 {
				return nil, true
			}
			if f != nil && len(a) == 2 && f.NoOptDefVal == "" {
				i++
			}
		default:
			out = append(out, a)
		}
	}
	return out, false
}

// helpCommand is root's `help` command (added by newRootCmd), or nil.
func helpCommand(root *cobra.Command) *cobra.Command {
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			return c
		}
	}
	return nil
}

func lookupFlag(c *cobra.Command, name string) *pflag.Flag {
	if f := c.Flags().Lookup(name); f != nil {
		return f
	}
	return c.InheritedFlags().Lookup(name)
}

func lookupShort(c *cobra.Command, short string) *pflag.Flag {
	if len(short) != 1 {
		return nil
	}
	if f := c.Flags().ShorthandLookup(short); f != nil {
		return f
	}
	return c.InheritedFlags().ShorthandLookup(short)
}

// dashArgsAnnotation marks a command whose positional arguments may begin
// with "-" (key ids are random base64url: about one in 64 does).
const dashArgsAnnotation = "pact/dash-args"

// protectDashArgs lets commands annotated with dashArgsAnnotation take an
// argument beginning with "-" without `--`: such an argument that is no
// flag of the command (long or short, with or without =value) is moved
// after a `--` so that flag parsing leaves it alone. Arguments already
// after a `--` are kept as they are. Other commands' args are returned
// unchanged.
func protectDashArgs(root *cobra.Command, args []string) []string {
	c, _, err := root.Find(args)
	if err != nil || c.Annotations[dashArgsAnnotation] == "" {
		return args
	}
	c.InitDefaultHelpFlag() // so that -h and --help stay flags
	var keep, moved, tail []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			tail = args[i+1:]
			break
		}
		if isForeignDashArg(c, a) {
			moved = append(moved, a)
			continue
		}
		keep = append(keep, a)
	}
	if len(moved) == 0 {
		return args
	}
	out := append(keep, "--")
	out = append(out, moved...)
	return append(out, tail...)
}

// isForeignDashArg reports whether a begins with "-" but names no flag of c.
func isForeignDashArg(c *cobra.Command, a string) bool {
	if !strings.HasPrefix(a, "-") || a == "-" {
		return false
	}
	if strings.HasPrefix(a, "--") {
		name, _, _ := strings.Cut(a[2:], "=")
		return lookupFlag(c, name) == nil
	}
	body, _, _ := strings.Cut(a[1:], "=")
	// A run of known shorthands (-h, or -xy for bool shorthands) is flags.
	for _, r := range body {
		if lookupShort(c, string(r)) == nil {
			return true
		}
	}
	return false
}

// wantsJSON reports whether args ask for --json (or --jq, which implies
// it), for errors found before flags are parsed.
func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--json" || a == "--json=true" || a == "--json-stream" || a == "--jq" || strings.HasPrefix(a, "--jq=") {
			return true
		}
	}
	return false
}
