package reply

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// The GitHub Flavored Markdown extensions the renderer draws: tables,
// ~~strikethrough~~ and task-list check boxes. goldmark ships them in its
// extension package, whose package init compiles the linkify regular
// expressions (about 0.7 ms of every pact process, issue 21); these are
// small, init-free versions with the same behaviour for what a reply needs.

var (
	kindStrike   = ast.NewNodeKind("Strikethrough")
	kindCheckBox = ast.NewNodeKind("TaskCheckBox")
	kindTable    = ast.NewNodeKind("Table")
	kindRow      = ast.NewNodeKind("TableRow")
	kindCell     = ast.NewNodeKind("TableCell")
)

// strikeNode is ~~text~~.
type strikeNode struct{ ast.BaseInline }

func (n *strikeNode) Kind() ast.NodeKind { return kindStrike }
func (n *strikeNode) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, nil, nil)
}

type strikeDelim struct{}

func (strikeDelim) IsDelimiter(b byte) bool { return b == '~' }
func (strikeDelim) CanOpenCloser(opener, closer *parser.Delimiter) bool {
	return opener.Char == closer.Char
}
func (strikeDelim) OnMatch(consumes int) ast.Node { return &strikeNode{} }

// strikeParser parses "~" and "~~" delimiters (GFM).
type strikeParser struct{}

func (strikeParser) Trigger() []byte { return []byte{'~'} }
func (strikeParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	before := block.PrecendingCharacter()
	line, segment := block.PeekLine()
	node := parser.ScanDelimiter(line, before, 1, strikeDelim{})
	if node == nil || node.OriginalLength > 2 || before == '~' {
		return nil
	}
	node.Segment = segment.WithStop(segment.Start + node.OriginalLength)
	block.Advance(node.OriginalLength)
	pc.PushDelimiter(node)
	return node
}
func (strikeParser) CloseBlock(parent ast.Node, pc parser.Context) {}

// checkBoxNode is "[ ]" or "[x]" at the start of a list item.
type checkBoxNode struct {
	ast.BaseInline
	checked bool
}

func (n *checkBoxNode) Kind() ast.NodeKind { return kindCheckBox }
func (n *checkBoxNode) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, nil, nil)
}

// checkBoxParser parses a task-list check box: "[ ]", "[x]" or "[X]"
// followed by a blank, first in a list item's first paragraph.
type checkBoxParser struct{}

func (checkBoxParser) Trigger() []byte { return []byte{'['} }
func (checkBoxParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	if parent.Parent() == nil || parent.Parent().FirstChild() != parent || parent.HasChildren() {
		return nil
	}
	if _, ok := parent.Parent().(*ast.ListItem); !ok {
		return nil
	}
	line, _ := block.PeekLine()
	if len(line) < 4 || line[0] != '[' || line[2] != ']' || (line[3] != ' ' && line[3] != '\t') {
		return nil
	}
	var checked bool
	switch line[1] {
	case ' ', '\t':
	case 'x', 'X':
		checked = true
	default:
		return nil
	}
	n := 3
	for n < len(line) && (line[n] == ' ' || line[n] == '\t') {
		n++
	}
	block.Advance(n)
	return &checkBoxNode{checked: checked}
}
func (checkBoxParser) CloseBlock(parent ast.Node, pc parser.Context) {}

// alignment of a table column.
type alignment int

const (
	alignNone alignment = iota
	alignLeft
	alignRight
	alignCenter
)

// tableNode is a GFM table: its children are rows (the first the header),
// theirs cells, whose Lines hold the cell's text for the inline parser.
type tableNode struct {
	ast.BaseBlock
	align []alignment
}

func (n *tableNode) Kind() ast.NodeKind { return kindTable }
func (n *tableNode) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, nil, nil)
}

type rowNode struct {
	ast.BaseBlock
	header bool
}

func (n *rowNode) Kind() ast.NodeKind { return kindRow }
func (n *rowNode) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, nil, nil)
}

type cellNode struct{ ast.BaseBlock }

func (n *cellNode) Kind() ast.NodeKind { return kindCell }
func (n *cellNode) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, nil, nil)
}

// tableTransformer turns a paragraph that holds a header row, a
// delimiter row ("| --- | :-: |") and body rows into a tableNode; lines
// before the header stay a paragraph.
type tableTransformer struct{}

func (tableTransformer) Transform(para *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := para.Lines()
	src := reader.Source()
	for i := 1; i < lines.Len(); i++ {
		delim := lines.At(i)
		align, ok := delimRow(src, delim)
		if !ok {
			continue
		}
		head := lines.At(i - 1)
		hcells := splitRow(src, head)
		if len(hcells) != len(align) || !(bytes.IndexByte(delim.Value(src), '|') >= 0 || bytes.IndexByte(head.Value(src), '|') >= 0) {
			continue
		}
		t := &tableNode{align: align}
		t.SetPos(head.Start)
		t.AppendChild(t, newRow(hcells, len(align), true))
		for j := i + 1; j < lines.Len(); j++ {
			t.AppendChild(t, newRow(splitRow(src, lines.At(j)), len(align), false))
		}
		parent := para.Parent()
		if i-1 == 0 {
			parent.ReplaceChild(parent, para, t)
			return
		}
		keep := text.NewSegments()
		for j := 0; j < i-1; j++ {
			keep.Append(lines.At(j))
		}
		para.SetLines(keep)
		parent.InsertAfter(parent, para, t)
		return
	}
}

func newRow(cells []text.Segment, n int, header bool) *rowNode {
	r := &rowNode{header: header}
	for k := 0; k < n; k++ {
		c := &cellNode{}
		if k < len(cells) {
			c.Lines().Append(cells[k])
		}
		r.AppendChild(r, c)
	}
	return r
}

// splitRow splits a table line at its unescaped pipes, without a leading
// and a trailing pipe, each cell trimmed of blanks.
func splitRow(src []byte, line text.Segment) []text.Segment {
	line = trimSeg(line, src)
	v := line.Value(src)
	start, end := 0, len(v)
	if end > 0 && v[0] == '|' {
		start = 1
	}
	if end > start && v[end-1] == '|' && (end < 2 || v[end-2] != '\\') {
		end--
	}
	var cells []text.Segment
	from := start
	for k := start; k <= end; k++ {
		if k == end || (v[k] == '|' && (k == 0 || v[k-1] != '\\')) {
			cells = append(cells, trimSeg(text.NewSegment(line.Start+from, line.Start+k), src))
			from = k + 1
		}
	}
	return cells
}

// delimRow reads a delimiter row: cells of dashes, each with an optional
// colon on either side.
func delimRow(src []byte, line text.Segment) ([]alignment, bool) {
	cells := splitRow(src, line)
	if len(cells) == 0 {
		return nil, false
	}
	align := make([]alignment, len(cells))
	for i, c := range cells {
		v := c.Value(src)
		if len(v) == 0 {
			return nil, false
		}
		left, right := v[0] == ':', v[len(v)-1] == ':'
		d := bytes.Trim(v, ":")
		if len(d) == 0 || len(bytes.Trim(d, "-")) != 0 || (left && right && len(v) < 3) {
			return nil, false
		}
		switch {
		case left && right:
			align[i] = alignCenter
		case left:
			align[i] = alignLeft
		case right:
			align[i] = alignRight
		}
	}
	return align, true
}

// trimSeg is s without leading and trailing blanks and line ends.
func trimSeg(s text.Segment, src []byte) text.Segment {
	s = s.TrimLeftSpace(src)
	return s.TrimRightSpace(src)
}
