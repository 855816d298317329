package reply

import (
	"sync"

	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/util"
)

// mdParser is goldmark's CommonMark parser with GFM tables,
// strikethrough and task-list check boxes (mdext.go); bare URLs are not
// turned into links, and there is no HTML renderer. It is built on first
// use, not at package init: most pact processes never render Markdown. A
// parser is safe for concurrent use.
var mdParser = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(parser.DefaultInlineParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
		parser.WithParagraphTransformers(util.Prioritized(tableTransformer{}, 200)),
		parser.WithInlineParsers(
			util.Prioritized(strikeParser{}, 500),
			util.Prioritized(checkBoxParser{}, 0),
		),
	)
})
