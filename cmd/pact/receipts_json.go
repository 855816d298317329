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
	return (*jsonMemo)(nil).appendItem(b, it)
}

// jsonMemo remembers, for one listing, the JSON of values that repeat from
// item to item (an action object, a problem's words): most receipts of an
// archive share them, and indenting or escaping them once is enough. A nil
// memo remembers nothing. It keeps at most memoMax entries.
type jsonMemo struct {
	actions, strs map[string][]byte
}

const memoMax = 512

func newJSONMemo() *jsonMemo {
	return &jsonMemo{actions: map[string][]byte{}, strs: map[string][]byte{}}
}

func (m *jsonMemo) appendItem(b []byte, it *receiptItemJSON) []byte {
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
			if m != nil {
				if js, ok := m.actions[string(a)]; ok {
					b = append(b, js...)
					continue
				}
			}
			var buf bytes.Buffer
			if err := json.Indent(&buf, a, "      ", "  "); err != nil {
				b = append(b, "null"...) // never: item() decoded it as JSON
				continue
			}
			if m != nil && len(m.actions) < memoMax {
				m.actions[string(a)] = buf.Bytes()
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
		b = m.appendStrings(b, it.Problems)
	}
	b = append(b, ",\n    \"replayed\": "...)
	b = strconv.AppendBool(b, it.Replayed)
	b = append(b, ",\n    \"notes\": "...)
	b = m.appendStrings(b, it.Notes)
	b = append(b, ",\n    \"restored\": "...)
	b = strconv.AppendBool(b, it.Restored)
	b = append(b, ",\n    \"cardUrl\": "...)
	b = appendJSONString(b, it.CardURL)
	b = append(b, ",\n    \"brandName\": "...)
	b = appendJSONString(b, it.BrandName)
	b = append(b, ",\n    \"interfaceUrl\": "...)
	b = appendJSONString(b, it.InterfaceURL)
	return append(b, "\n  }"...)
}

func appendStrings(b []byte, ss []string) []byte { return (*jsonMemo)(nil).appendStrings(b, ss) }

func (m *jsonMemo) appendStrings(b []byte, ss []string) []byte {
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
		b = m.appendString(b, s)
	}
	return append(b, "\n    ]"...)
}

// appendString is appendJSONString, remembering the JSON of strings that
// need escaping.
func (m *jsonMemo) appendString(b []byte, s string) []byte {
	if m == nil {
		return appendJSONString(b, s)
	}
	if js, ok := m.strs[s]; ok {
		return append(b, js...)
	}
	start := len(b)
	b = appendJSONString(b, s)
	if len(m.strs) < memoMax {
		m.strs[s] = append([]byte(nil), b[start:]...)
	}
	return b
}

// appendJSONString appends s as encoding/json does with HTML escaping off:
// printable ASCII as is, " and \ escaped with a backslash, anything else
// (control characters, non-ASCII) through encoding/json itself.
func appendJSONString(b []byte, s string) []byte {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf {
			plain = false
			break
		} else if c == '"' || c == '\\' {
			plain = false
		}
	}
	if !plain && asciiQuoted(s) {
		b = append(b, '"')
		for i := 0; i < len(s); i++ {
			if c := s[i]; c == '"' || c == '\\' {
				b = append(b, '\\')
			}
			b = append(b, s[i])
		}
		return append(b, '"')
	}
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

// asciiQuoted reports whether s is printable ASCII (quotes and backslashes
// allowed): what appendJSONString escapes by hand.
func asciiQuoted(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
