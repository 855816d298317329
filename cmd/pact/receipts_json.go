package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// appendItemJSON appends it (a receipts.Item with the Brand's card URL and
// name) exactly as printJSON shows an element of a top-level array
// (encoding/json, indent "  ", no HTML escaping), without
// the reflection and re-indenting of the whole object that dominate a
// 100,000-receipt listing. TestAppendItemJSON_SameAsEncodingJSON holds it
// to encoding/json's bytes.
func appendItemJSON(b []byte, it *receiptItemJSON) []byte {
	b = append(b, "{\n    \"id\": "...)
	b = appendJSONString(b, it.ID)
	b = append(b, ",\n    \"brand\": "...)
	b = appendJSONString(b, it.Brand)
	b = append(b, ",\n    \"grantId\": "...)
	b = appendJSONString(b, it.GrantID)
	b = append(b, ",\n    \"user\": "...)
	b = appendJSONString(b, it.User)
	b = append(b, ",\n    \"scopesUsed\": "...)
	b = appendStrings(b, it.ScopesUsed)
	b = append(b, ",\n    \"actions\": "...)
	if it.Actions == nil {
		b = append(b, "null"...)
	} else if len(it.Actions) == 0 {
		b = append(b, "[]"...)
	} else {
		b = append(b, "[\n"...)
		for i, a := range it.Actions {
			if i > 0 {
				b = append(b, ",\n"...)
			}
			b = append(b, "      "...)
			var buf bytes.Buffer
			if err := json.Indent(&buf, a, "      ", "  "); err != nil {
				b = append(b, "null"...) // never: item() decoded it as JSON
				continue
			}
			b = append(b, buf.Bytes()...)
		}
		b = append(b, "\n    ]"...)
	}
	b = append(b, ",\n    \"ts\": "...)
	b = appendJSONString(b, it.TS)
	b = append(b, ",\n    \"verified\": "...)
	b = strconv.AppendBool(b, it.Verified)
	b = append(b, ",\n    \"problems\": "...)
	if it.Problems == nil {
		b = append(b, "null"...)
	} else {
		b = appendStrings(b, it.Problems)
	}
	b = append(b, ",\n    \"replayed\": "...)
	b = strconv.AppendBool(b, it.Replayed)
	b = append(b, ",\n    \"notes\": "...)
	b = appendStrings(b, it.Notes)
	b = append(b, ",\n    \"cardUrl\": "...)
	b = appendJSONString(b, it.CardURL)
	b = append(b, ",\n    \"brandName\": "...)
	b = appendJSONString(b, it.BrandName)
	return append(b, "\n  }"...)
}

func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	if len(ss) == 0 {
		return append(b, "[]"...)
	}
	b = append(b, "[\n"...)
	for i, s := range ss {
		if i > 0 {
			b = append(b, ",\n"...)
		}
		b = append(b, "      "...)
		b = appendJSONString(b, s)
	}
	return append(b, "\n    ]"...)
}

// appendJSONString appends s as encoding/json does with HTML escaping off:
// printable ASCII as is (but " and \), anything else through
// encoding/json itself.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.Encode(s)
			return append(b, bytes.TrimRight(buf.Bytes(), "\n")...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
