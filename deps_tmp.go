//go:build tools

package pact

import (
	_ "github.com/a2aproject/a2a-go/v2/a2a"
	_ "github.com/a2aproject/a2a-go/v2/a2aclient"
	_ "github.com/a2aproject/a2a-go/v2/a2asrv"
	_ "github.com/adrg/xdg"
	_ "github.com/charmbracelet/bubbles/spinner"
	_ "github.com/charmbracelet/bubbles/textarea"
	_ "github.com/charmbracelet/bubbles/viewport"
	_ "github.com/charmbracelet/bubbletea"
	_ "github.com/charmbracelet/lipgloss"
	_ "github.com/charmbracelet/x/exp/teatest"
	_ "github.com/creack/pty"
	_ "github.com/go-jose/go-jose/v4"
	_ "github.com/go-jose/go-jose/v4/jwt"
	_ "github.com/gofrs/flock"
	_ "github.com/google/renameio/v2"
	_ "github.com/itchyny/gojq"
	_ "github.com/pkg/browser"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/spf13/cobra"
	_ "github.com/spf13/cobra/doc"
	_ "github.com/zalando/go-keyring"
	_ "golang.org/x/oauth2"
)
