package spec

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// SplitPage splits an experiment page into its YAML front matter and its markdown body.
// The page must start with a line "---"; the front matter runs up to the next line that is
// "---" (trailing blanks and a CRLF line end are allowed; a leading UTF-8 byte order mark
// is skipped). front holds the lines in between, frontLine is the page line on which front
// begins (2), and body is everything after the closing line, byte for byte.
func SplitPage(data []byte) (front []byte, frontLine int, body []byte, err error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	first, rest, ok := cutLine(data)
	if !isDelimiter(first) {
		return nil, 0, nil, errors.New("missing front matter (the page must start with a --- line)")
	}
	if !ok {
		return nil, 0, nil, errors.New("front matter is not closed (no --- line after line 1)")
	}
	for off := 0; off < len(rest); {
		line, _, more := cutLine(rest[off:])
		next := off + len(line)
		if more {
			next++
		}
		if isDelimiter(line) {
			return rest[:off], 2, rest[next:], nil
		}
		off = next
	}
	return nil, 0, nil, errors.New("front matter is not closed (no --- line after line 1)")
}

// cutLine returns the first line of data without its "\n", the rest after it, and whether
// there was a "\n".
func cutLine(data []byte) (line, rest []byte, found bool) {
	return bytes.Cut(data, []byte("\n"))
}

// isDelimiter reports whether line is a front matter delimiter.
func isDelimiter(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

// ParseFile reads and parses the experiment page at path; see Parse.
func ParseFile(path string) (*Experiment, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse parses and validates the front matter of the experiment page data, read from
// path (which prefixes every error). Every problem is reported as "path:line: field:
// message": YAML syntax, unknown fields (with the nearest known field when it looks like a
// typo), values of the wrong type, fields written empty, then the rules of Validate. When
// err is not nil the returned *Experiment is nil.
//
// Parse applies no defaults: a field left out stays zero, and Resolve fills it in.
func Parse(path string, data []byte) (*Experiment, error) {
	front, frontLine, _, err := SplitPage(data)
	if err != nil {
		return nil, &Error{File: path, Line: 1, Msg: err.Error()}
	}
	e := &Experiment{Path: path}
	lines, err := decodeDocument(path, front, frontLine, "front matter", e)
	if err != nil {
		return nil, err
	}
	e.Lines = lines
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return e, nil
}

// decodeDocument decodes the YAML document src, whose first line is line firstLine of the
// file path, into out (a pointer to a struct), and returns the line of every field written.
// what names the document in messages ("front matter", "gate spec"). Every problem is an
// *Error: YAML syntax, unknown fields (with the nearest known field when it looks like a
// typo), values of the wrong type and fields written empty.
func decodeDocument(path string, src []byte, firstLine int, what string, out any) (map[string]int, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, yamlError(path, firstLine, src, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == 0 || root.Kind == yaml.DocumentNode {
		return nil, &Error{File: path, Line: firstLine, Msg: what + " is empty"}
	}
	d := &decoder{
		problems: problems{file: path},
		offset:   firstLine - 1,
		last:     firstLine - 1 + bytes.Count(src, []byte("\n")) + 1,
		lines:    map[string]int{},
	}
	if root.Kind != yaml.MappingNode {
		d.add(d.line(root), "", "%s must be a mapping of fields, got %s", what, describe(root))
		return nil, d.err()
	}
	d.lines[""] = d.line(root)
	d.decode(root, "", reflect.ValueOf(out).Elem())
	if err := d.err(); err != nil {
		return nil, err
	}
	return d.lines, nil
}

// yamlLinePattern matches the line number in the YAML parser's messages.
const yamlLinePattern = `^yaml: line (\d+): (.*)$`

// yamlParserProblems returns the messages of the YAML parser (as opposed to its scanner).
// go.yaml.in/yaml/v3 reports their lines counted from 0, and the scanner's from 1.
func yamlParserProblems() []string {
	return []string{
		"did not find expected ',' or ']'",
		"did not find expected ',' or '}'",
		"did not find expected '-' indicator",
		"did not find expected <document start>",
		"did not find expected <stream-start>",
		"did not find expected key",
		"did not find expected node content",
		"found duplicate %TAG directive",
		"found duplicate %YAML directive",
		"found incompatible YAML document",
		"found undefined tag handle",
	}
}

// yamlError turns a YAML syntax error into an *Error with the page's line number. A
// message without a line is placed on the front matter's first line.
func yamlError(path string, frontLine int, src []byte, err error) error {
	msg := err.Error()
	if m := regexp.MustCompile(`^yaml: unknown anchor '([^']*)' referenced$`).FindStringSubmatch(msg); m != nil {
		// The parser gives no line for an alias to an anchor never defined: find it.
		return &Error{File: path, Line: aliasLine(src, m[1]) + frontLine - 1, Msg: "invalid YAML: alias *" + m[1] + " refers to no anchor &" + m[1] + " defined before it"}
	}
	if m := regexp.MustCompile(yamlLinePattern).FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		if slices.Contains(yamlParserProblems(), m[2]) {
			n++
		}
		// A problem found at the end of the document (an unclosed "{") is placed on its
		// last line, not on the one after it.
		last := bytes.Count(src, []byte("\n")) + 1
		return &Error{File: path, Line: min(max(n, 1), last) + frontLine - 1, Msg: "invalid YAML: " + m[2]}
	}
	return &Error{File: path, Line: frontLine, Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}

// aliasLine returns the 1-based line of src holding the first alias *name, or 1.
func aliasLine(src []byte, name string) int {
	re := regexp.MustCompile(`(^|[\s\[\{,:?-])\*` + regexp.QuoteMeta(name) + `($|[\s\]\},])`)
	for i, line := range strings.Split(string(src), "\n") {
		if re.MatchString(line) {
			return i + 1
		}
	}
	return 1
}

// decoder walks a YAML node tree into Go values, recording the line of every field and
// every problem.
type decoder struct {
	problems
	offset int            // page line of the front matter's line 1, minus 1
	last   int            // page line of the document's last line
	lines  map[string]int // field path -> page line
}

// line is the page line of n. The YAML parser places an empty document ("---" alone)
// on the line after it; that is placed on the document's last line.
func (d *decoder) line(n *yaml.Node) int { return min(n.Line+d.offset, d.last) }

// decode stores n into v, the Go value for the field at path field. v must be settable.
func (d *decoder) decode(n *yaml.Node, field string, v reflect.Value) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		d.add(d.line(n), field, "must not be empty")
		return
	}
	switch v.Type() {
	case reflect.TypeFor[Duration]():
		dur, msg := parseDuration(n)
		if msg != "" {
			d.add(d.line(n), field, "%s", msg)
			return
		}
		v.Set(reflect.ValueOf(dur))
		return
	case reflect.TypeFor[[]Arm](): // a mapping of arm name to arm, kept in order
		d.decodeArms(n, field, v)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		d.decode(n, field, p.Elem())
		v.Set(p)
	case reflect.Struct:
		d.decodeStruct(n, field, v)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.add(d.line(n), field, "must be a list, got %s", describe(n))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			path := fmt.Sprintf("%s[%d]", field, i)
			d.lines[path] = d.line(item)
			d.decode(item, path, s.Index(i))
		}
		v.Set(s)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			d.add(d.line(n), field, "must be a mapping, got %s", describe(n))
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
		d.eachKey(n, field, func(key string, k, val *yaml.Node) {
			path := join(field, key)
			d.lines[path] = d.line(k)
			elem := reflect.New(v.Type().Elem()).Elem()
			d.decode(val, path, elem)
			m.SetMapIndex(reflect.ValueOf(key), elem)
		})
		v.Set(m)
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			d.add(d.line(n), field, "must be a string, got %s", describe(n))
			return
		}
		// A plain 123, 1.10 or true is a number or a boolean in YAML, not text: taking
		// its spelling would turn env: {A: 1.10} into "1.10" here and 1.1 elsewhere.
		if tag := n.ShortTag(); tag != "!!str" && tag != "!!timestamp" {
			d.add(d.line(n), field, "must be a string, got %s %s (quote it if the text is meant: %q)", kindOf(tag), n.Value, n.Value)
			return
		}
		v.SetString(n.Value)
	case reflect.Int, reflect.Int64:
		var x int64
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&x) != nil || v.OverflowInt(x) {
			d.add(d.line(n), field, "must be an integer, got %s", describe(n))
			return
		}
		v.SetInt(x)
	case reflect.Float64:
		var x float64
		tag := n.ShortTag()
		if n.Kind != yaml.ScalarNode || (tag != "!!int" && tag != "!!float") || n.Decode(&x) != nil ||
			math.IsNaN(x) || math.IsInf(x, 0) {
			d.add(d.line(n), field, "must be a number, got %s", describe(n))
			return
		}
		v.SetFloat(x)
	case reflect.Bool:
		var x bool
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&x) != nil {
			d.add(d.line(n), field, "must be true or false, got %s", describe(n))
			return
		}
		v.SetBool(x)
	default:
		panic(fmt.Sprintf("spec: cannot decode into %s", v.Type()))
	}
}

// decodeStruct decodes the mapping n into the struct v, by the fields' yaml tags.
func (d *decoder) decodeStruct(n *yaml.Node, field string, v reflect.Value) {
	if n.Kind != yaml.MappingNode {
		d.add(d.line(n), field, "must be a mapping, got %s", describe(n))
		return
	}
	t := v.Type()
	var known []string
	index := map[string]int{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		known = append(known, name)
		index[name] = i
	}
	if f, ok := t.FieldByName("Line"); ok && f.Type.Kind() == reflect.Int {
		v.FieldByIndex(f.Index).SetInt(int64(d.line(n)))
	}
	d.eachKey(n, field, func(key string, k, val *yaml.Node) {
		path := join(field, key)
		i, ok := index[key]
		if !ok {
			if s := Suggest(key, known); s != "" {
				d.add(d.line(k), path, "unknown field (did you mean %s?)", s)
			} else {
				d.add(d.line(k), path, "unknown field (known: %s)", strings.Join(known, ", "))
			}
			return
		}
		d.lines[path] = d.line(k)
		if key == "expect" && t == reflect.TypeFor[Lane]() && val.Kind == yaml.MappingNode {
			// A prediction per candidate arm: expect: {candA: neutral, candB: faster}.
			d.decode(val, path, v.FieldByName("ExpectArms"))
			return
		}
		if val.Kind == yaml.ScalarNode && val.ShortTag() == "!!str" && val.Value == "" &&
			t.Field(i).Type.Kind() == reflect.String && !emptyAllowed(path) {
			d.add(d.line(val), path, "must not be empty")
			return
		}
		d.decode(val, path, v.Field(i))
	})
}

// emptyAllowed reports whether the string field at path may be written as "".
func emptyAllowed(path string) bool { return path == "status-by" }

// decodeArms decodes the mapping of arm name to arm into v, a []Arm, keeping the order.
func (d *decoder) decodeArms(n *yaml.Node, field string, v reflect.Value) {
	if n.Kind != yaml.MappingNode {
		d.add(d.line(n), field, "must be a mapping of arm name to arm, got %s", describe(n))
		return
	}
	var arms []Arm
	d.eachKey(n, field, func(key string, k, val *yaml.Node) {
		path := join(field, key)
		d.lines[path] = d.line(k)
		a := Arm{Name: key}
		d.decode(val, path, reflect.ValueOf(&a).Elem())
		a.Line = d.line(k)
		arms = append(arms, a)
	})
	v.Set(reflect.ValueOf(arms))
}

// eachKey calls fn for every key of the mapping n in order, reporting keys that are not
// strings and keys given twice.
func (d *decoder) eachKey(n *yaml.Node, field string, fn func(key string, k, v *yaml.Node)) {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!null" {
			d.add(d.line(k), field, "field names must be strings, got %s", describe(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.add(d.line(k), join(field, k.Value), "given twice (first at line %d)", first)
			continue
		}
		seen[k.Value] = d.line(k)
		fn(k.Value, k, val)
	}
}

// join appends key to the dotted field path.
func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

// kindOf names the type of a YAML scalar tag that is not a string, for messages.
func kindOf(tag string) string {
	switch tag {
	case "!!int", "!!float":
		return "the number"
	case "!!bool":
		return "the boolean"
	}
	return "the " + strings.TrimPrefix(tag, "!!")
}

// describe names what a node holds, for "must be X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if n.ShortTag() == "!!null" {
		return "nothing"
	}
	return strconv.Quote(n.Value)
}
