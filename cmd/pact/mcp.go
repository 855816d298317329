package main

import (
	"fmt"
	"io"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/mcpserver"
)

func newMCPCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve pact's tools to an AI assistant over MCP (stdio)",
		Long: `Run a Model Context Protocol server on stdin/stdout for an MCP client (a desktop
assistant, an IDE agent, an agent framework). The client can send messages to
Brands, read Agent Cards, start a login the User approves in their own
browser, and list and verify receipts. Keys, tokens and consent stay with
pact and the User. Stdout carries only protocol messages; notices (and
--debug traces, secrets redacted) go to stderr. See docs/mcp.md.`,
		Args: exactArgs(0, "mcp takes no arguments (configure it as an MCP client's server command)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, _, err := a.loadProfile(); err != nil {
				return err
			}
			// Stdout is the protocol's: everything else written for people
			// (spinners, notices, a browser command's output) goes to stderr.
			out := a.io.Out
			a.io.Out = a.io.ErrOut
			if out == io.Writer(os.Stdout) {
				os.Stdout = os.Stderr
			}
			ag, err := a.agent()
			if err != nil {
				return err
			}
			srv := mcpserver.New(mcpserver.Config{Agent: ag, NoBrowser: a.noBrows, Log: a.io.ErrOut, Version: stamp().version})
			// A line that is not a JSON-RPC message is answered with an
			// error and skipped, never the end of the session.
			logw := a.io.ErrOut
			t := mcpserver.StdioTransport(a.io.In, out, func(format string, args ...any) {
				fmt.Fprintf(logw, "pact mcp: "+format+"\n", args...)
			})
			if a.debug {
				t = &mcp.LoggingTransport{Transport: t, Writer: a.io.ErrOut}
			}
			return srv.Run(cmd.Context(), t)
		},
	}
}
