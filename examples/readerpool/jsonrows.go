package readerpool

import (
	"encoding/base64"
	"math"
	"strconv"
	"unicode/utf8"
)

// This file renders result rows as JSON the way SelectBytes returns them: an array with
// one object per row, keyed by column name, in column order. Integers and floats are JSON
// numbers (a NaN or an infinity becomes null), text is a JSON string (invalid UTF-8
// becomes U+FFFD), a blob is a base64 string (as encoding/json renders []byte), and
// NULL is null.

const hexDigits = "0123456789abcdef"

// appendJSONString appends s to dst as a quoted JSON string.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendJSONFloat appends f as a JSON number, or null when JSON cannot represent it.
func appendJSONFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

// appendJSONBlob appends b as a quoted base64 string.
func appendJSONBlob(dst []byte, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// jsonKeys returns, for each column name, the rendered object key including its colon.
func jsonKeys(names []string) [][]byte {
	keys := make([][]byte, len(names))
	for i, n := range names {
		keys[i] = append(appendJSONString(nil, n), ':')
	}
	return keys
}
