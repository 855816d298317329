package server

import _ "embed"

// OpenAPI is the OpenAPI 3.1 document of the server's HTTP API, served at
// /v1/openapi.json. docs/openapi.json is the same file (a test keeps them
// equal and checks that every mounted route is in it: when you add a
// route, describe it in server/openapi.json and copy it to docs/).
//
//go:embed openapi.json
var OpenAPI []byte
